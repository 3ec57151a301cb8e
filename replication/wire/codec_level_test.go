package wire

// levelSampleOps are samples of the engine level switch (op 48).
func levelSampleOps() []Op {
	return []Op{EngineLevel{Level: 1}, EngineLevel{Level: 0}, EngineLevel{Level: 7}}
}
