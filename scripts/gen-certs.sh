#!/bin/sh
# Generates test certificates for streamd's TLS, as Redis's
# utils/gen-test-certs.sh does: a CA, a server certificate (SAN 127.0.0.1,
# ::1 and localhost), a client certificate, and a generic one for both
# roles (a cluster node presents it when it accepts and when it dials),
# signed by the CA. Usage: scripts/gen-certs.sh [dir] (default ./tls).
# Existing keys are kept; certificates are re-issued (CERT_DAYS, default
# 365; CA_KEY_BITS, default 4096). Never use these in
# production: the CA key sits next to them, unencrypted.
set -eu

dir=${1:-tls}
days=${CERT_DAYS:-365}
mkdir -p "$dir"

if [ ! -f "$dir/ca.key" ]; then
    openssl genrsa -out "$dir/ca.key" "${CA_KEY_BITS:-4096}" 2>/dev/null
fi
openssl req -x509 -new -nodes -sha256 -key "$dir/ca.key" -days 3650 \
    -subj '/O=streamd Test/CN=Certificate Authority' -out "$dir/ca.crt"

cat > "$dir/openssl.cnf" <<_END_
[ server_cert ]
keyUsage = digitalSignature, keyEncipherment
extendedKeyUsage = serverAuth
subjectAltName = IP:127.0.0.1, IP:::1, DNS:localhost

[ client_cert ]
keyUsage = digitalSignature, keyEncipherment
extendedKeyUsage = clientAuth

[ generic_cert ]
keyUsage = digitalSignature, keyEncipherment
extendedKeyUsage = serverAuth, clientAuth
subjectAltName = IP:127.0.0.1, IP:::1, DNS:localhost
_END_

# generate_cert name CN extensions
generate_cert() {
    if [ ! -f "$dir/$1.key" ]; then
        openssl genrsa -out "$dir/$1.key" 2048 2>/dev/null
    fi
    openssl req -new -sha256 -subj "/O=streamd Test/CN=$2" -key "$dir/$1.key" |
        openssl x509 -req -sha256 -CA "$dir/ca.crt" -CAkey "$dir/ca.key" \
            -CAserial "$dir/ca.txt" -CAcreateserial -days "$days" \
            -extfile "$dir/openssl.cnf" -extensions "$3" -out "$dir/$1.crt" 2>/dev/null
}

generate_cert server "Server-only" server_cert
generate_cert client "Client-only" client_cert
generate_cert streamd "Generic-cert" generic_cert
echo "certificates in $dir/: ca.crt, server.{crt,key}, client.{crt,key}, streamd.{crt,key}"
