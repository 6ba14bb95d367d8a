# SPDX-License-Identifier: GPL-2.0-or-later
# Independent references for signature tests: keys and certificates from
# the openssl command line, the EVM signature's data built from the
# kernel's recipe with stat/lsattr/getfattr, digests from `openssl dgst`
# and signature checks with `openssl pkeyutl -verify` -- no uevm code.
# Source it after lib.sh (it sources ref_evm.sh).
source "$TESTS_DIR/ref_evm.sh"

SIG_KEYS="rsa2048 rsa4096 p256 p384"
SIG_ALGOS="sha1 sha224 sha256 sha384 sha512"

# kernel hash algorithm ids
algo_id() {
	case $1 in
	sha1) echo 02 ;; sha256) echo 04 ;; sha384) echo 05 ;;
	sha512) echo 06 ;; sha224) echo 07 ;;
	esac
}

# make_sig_keys DIR: DIR/NAME.key (PEM private key), NAME.pem and NAME.der
# (self-signed certificate; OpenSSL adds a SKID = SHA-1 of the public key),
# NAME.pub (PEM public key) for every NAME in SIG_KEYS.
make_sig_keys() {
	local dir=$1 name opt
	for name in $SIG_KEYS; do
		case $name in
		rsa2048) opt=(-newkey rsa:2048) ;;
		rsa4096) opt=(-newkey rsa:4096) ;;
		p256) opt=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1) ;;
		p384) opt=(-newkey ec -pkeyopt ec_paramgen_curve:secp384r1) ;;
		esac
		openssl req -x509 "${opt[@]}" -nodes -keyout "$dir/$name.key" \
			-out "$dir/$name.pem" -subj "/CN=uevm test $name" -days 30 \
			2>/dev/null || return 1
		openssl x509 -in "$dir/$name.pem" -outform DER -out "$dir/$name.der" || return 1
		openssl pkey -in "$dir/$name.key" -pubout -out "$dir/$name.pub" || return 1
	done
}

# The keyid a signature must carry: the last 4 bytes of the SKID.
skid_keyid() {
	openssl x509 -in "$1" -noout -ext subjectKeyIdentifier 2>/dev/null |
		tail -n1 | tr -d ' :\n' | tr A-F a-f | tail -c 8
}

# hex_to_file HEX FILE
hex_to_file() { tr a-f A-F <<<"$1" | basenc --base16 -d >"$2"; }

# The header of a signature value: type version algo keyid size (hex).
sig_header() { cut -c1-18 <<<"$1"; }
# sig_body_file VALUEHEX FILE: the signature after the 9-byte header.
sig_body_file() { hex_to_file "$(cut -c19- <<<"$1")" "$2"; }
# Declared signature size (bytes) and the body's real size.
sig_size_field() { echo $((16#$(cut -c15-18 <<<"$1"))); }
sig_body_len() { echo $(((${#1} - 18) / 2)); }

# ref_evm_sig_data PATH TYPE [UUID]: hex of the data an EVM signature of
# TYPE (03 or 05) covers: protected values in kernel order, h_misc (ino and
# generation zero for 05), and the fs UUID for 03 when given.
ref_evm_sig_data() {
	local path=$1 type=$2 uuid=${3:-} data="" name ino uid gid mode gen
	for name in $REF_EVM_XATTRS; do
		getfattr -h --absolute-names -n "$name" "$path" >/dev/null 2>&1 || continue
		data+=$(xattr_hex "$name" "$path")
	done
	read -r ino uid gid mode < <(stat -c '%i %u %g %f' -- "$path")
	gen=$(ext4_generation "$path")
	if [ "$type" = 05 ]; then
		ino=0
		gen=0
		uuid=""
	fi
	data+=$(hex_le 8 "$ino")$(hex_le 4 "$gen")$(hex_le 4 "$uid")$(hex_le 4 "$gid")
	data+=$(hex_le 2 "$((16#$mode))")0000
	[ -n "$uuid" ] && data+=$(tr -d '-' <<<"$uuid" | tr A-F a-f)
	echo "$data"
}

# digest_file ALGO IN OUT: the binary digest of IN.
digest_file() { openssl dgst "-$1" -binary "$2" >"$3"; }

# pkey_verify PUB ALGO DIGESTFILE SIGFILE: openssl's own check of a
# signature over a digest (PKCS#1 v1.5 DigestInfo for RSA, DER ECDSA).
pkey_verify() {
	openssl pkeyutl -verify -pubin -inkey "$1" -pkeyopt "digest:$2" \
		-in "$3" -sigfile "$4" >/dev/null 2>&1
}

# v3_digest_file TYPE ALGO DIGESTFILE OUT: ALGO over {type, algo, digest}
# (struct ima_file_id without its unused tail).
v3_digest_file() {
	local tmp=$4.id
	hex_to_file "$1$(algo_id "$2")$(hex_of_file "$3")" "$tmp"
	openssl dgst "-$2" -binary "$tmp" >"$4"
}
