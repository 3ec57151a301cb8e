package server

import "testing"

// TestXReadArguments checks XREAD/XREADGROUP replies and errors against
// what redis-server 7.0.15 answers (XREAD "+" is Redis 7.4's last entry).
func TestXReadArguments(t *testing.T) {
	_, addr := startTestServer(t, nil)
	c := dial(t, addr)
	const dollar = "ERR The $ ID is meaningless in the context of XREADGROUP: you want to read the history of " +
		"this consumer by specifying a proper ID, or use the > ID to get new messages. The $ ID would just " +
		"return an empty result set."
	runSteps(t, c, []step{
		{[]string{"XADD", "s", "1-1", "a", "1"}, `"1-1"`},
		{[]string{"XADD", "s", "2-1", "b", "2"}, `"2-1"`},
		{[]string{"XADD", "t", "1-1", "c", "3"}, `"1-1"`},
		{[]string{"XGROUP", "CREATE", "s", "g", "0"}, "+OK"},
		{[]string{"XREAD", "STREAMS", "s", "0"}, `[["s", [["1-1", ["a", "1"]], ["2-1", ["b", "2"]]]]]`},
		{[]string{"XREAD", "COUNT", "1", "STREAMS", "s", "t", "0", "0"},
			`[["s", [["1-1", ["a", "1"]]]], ["t", [["1-1", ["c", "3"]]]]]`},
		{[]string{"XREAD", "COUNT", "-1", "STREAMS", "s", "1-1"}, `[["s", [["2-1", ["b", "2"]]]]]`},
		{[]string{"XREAD", "STREAMS", "s", "$"}, "(nil array)"},
		{[]string{"XREAD", "STREAMS", "s", "+"}, `[["s", [["2-1", ["b", "2"]]]]]`},
		{[]string{"XREAD", "STREAMS", "nokey", "0"}, "(nil array)"},
		{[]string{"XREAD", "BLOCK", "10", "STREAMS", "nokey", "0"}, "(nil array)"},
		{[]string{"XREAD", "STREAMS", "s", "a", "b"}, "(error) ERR Unbalanced XREAD list of streams: for each stream key an ID or '$' must be specified."},
		{[]string{"XREAD", "COUNT", "x", "STREAMS", "s", "0"}, "(error) ERR value is not an integer or out of range"},
		{[]string{"XREAD", "BLOCK", "-1", "STREAMS", "s", "0"}, "(error) ERR timeout is negative"},
		{[]string{"XREAD", "BLOCK", "1.5", "STREAMS", "s", "0"}, "(error) ERR timeout is not an integer or out of range"},
		{[]string{"XREAD", "FOO", "STREAMS", "s", "0"}, "(error) ERR syntax error"},
		{[]string{"XREAD", "COUNT", "1", "STREAMS"}, "(error) ERR syntax error"},
		{[]string{"XREAD", "STREAMS", "s", "x"}, "(error) ERR Invalid stream ID specified as stream command argument"},
		{[]string{"XREAD", "STREAMS", "s", "-"}, "(error) ERR Invalid stream ID specified as stream command argument"},
		{[]string{"XREAD", "STREAMS", "s", ">"}, "(error) ERR The > ID can be specified only when calling XREADGROUP using the GROUP <group> <consumer> option."},
		{[]string{"XREAD", "GROUP", "g", "c", "STREAMS", "s", "0"}, "(error) ERR The GROUP option is only supported by XREADGROUP. You called XREAD instead."},
		{[]string{"XREAD", "NOACK", "STREAMS", "s", "0"}, "(error) ERR The NOACK option is only supported by XREADGROUP. You called XREAD instead."},
		{[]string{"XREADGROUP", "COUNT", "1", "BLOCK", "1", "STREAMS", "s", ">"}, "(error) ERR Missing GROUP option for XREADGROUP"},
		{[]string{"XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "$"}, "(error) " + dollar},
		{[]string{"XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "+"}, "(error) ERR Invalid stream ID specified as stream command argument"},
		// Redis looks each key's group up before parsing its ID.
		{[]string{"XREADGROUP", "GROUP", "g", "c", "STREAMS", "t", "s", "$", ">"}, "(error) NOGROUP No such key 't' or consumer group 'g' in XREADGROUP with GROUP option"},
		{[]string{"XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "t", "$", ">"}, "(error) " + dollar},
		{[]string{"XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "t", ">", ">"}, "(error) NOGROUP No such key 't' or consumer group 'g' in XREADGROUP with GROUP option"},
		{[]string{"XREADGROUP", "GROUP", "g", "c", "COUNT", "1", "STREAMS", "s", ">"}, `[["s", [["1-1", ["a", "1"]]]]]`},
		{[]string{"XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "s", "0"}, `[["s", [["1-1", ["a", "1"]]]]]`},
		{[]string{"XREADGROUP", "GROUP", "g", "c2", "BLOCK", "0", "STREAMS", "s", "0"}, `[["s", []]]`},
		{[]string{"XREADGROUP", "GROUP", "g", "c", "NOACK", "STREAMS", "s", ">"}, `[["s", [["2-1", ["b", "2"]]]]]`},
		{[]string{"XREADGROUP", "GROUP", "g", "c", "BLOCK", "10", "STREAMS", "s", ">"}, "(nil array)"},
	})
	mustDo(t, c, "HELLO", "3")
	runSteps(t, c, []step{
		{[]string{"XREAD", "STREAMS", "s", "t", "1-1", "0"}, `map{"s": [["2-1", ["b", "2"]]], "t": [["1-1", ["c", "3"]]]}`},
		{[]string{"XREAD", "STREAMS", "s", "$"}, "(null)"},
	})
}
