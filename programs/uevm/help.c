// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Help for every command and subcommand, and the messages for options a
 * command does not take, both from one table: what each command accepts.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "help.h"
#include "prog.h"

#define HELP_ROW { 'h', "help", NULL, "print this help and exit" }
#define END_ROW { 0, NULL, NULL, NULL }

/* Rows shared by the commands that walk trees (common_opt). */
#define WALK_ROWS \
	{ 'r', "recursive", NULL, "descend into directories (symbolic links below a PATH are never followed)" }, \
	{ 'x', "one-file-system", NULL, "with -r, leave out objects on other filesystems" }, \
	{ 'j', "jobs", "N", "worker threads, 1 to 1024 (default: the online CPUs)" }
#define ALGO_ROW \
	{ 'a', "hash-algo", "ALGO", "hash for security.ima: sha256 (default), sha1, sha384, sha512, ..." }
#define VERBOSE_ROW \
	{ 'v', "verbose", NULL, "list every object labelled on stdout, and a summary on stderr" }
#define HMAC_KEY_ROW \
	{ 'k', "hmac-key", "KEY", "the EVM HMAC key, its form named: raw:FILE, passphrase:FILE, tpm:FILE, kernel-blob:FILE,master=FILE, keyring:NAME" }
#define HMAC_LAYOUT_ROWS \
	{ 0, "uuid", "UUID|auto|none", "the filesystem UUID bound into the HMAC (default auto: the filesystem's)" }, \
	{ 0, "m32", NULL, "the HMAC's h_misc layout of a 32-bit kernel" }, \
	{ 0, "m64", NULL, "the layout of a 64-bit kernel (the default)" }, \
	{ 0, "evm-xattr", "NAME", "also protect this security.* attribute (repeatable), like the kernel's evm_xattrs" }
/* How label, verify, clear and sign take their PATHs (common_opt). */
#define PATH_ROWS \
	{ 'P', "no-dereference", NULL, "never follow a symbolic link given as PATH (the default for objects below)" }, \
	{ 'd', "directory", NULL, "take a directory PATH itself, not its contents" }, \
	{ 0, "root", "DIR", "resolve every PATH beneath DIR; nothing outside it is reached" }, \
	{ 0, "exclude", "GLOB", "leave out objects whose path matches GLOB (repeatable)" }, \
	{ 0, "exclude-from", "FILE", "leave out the patterns listed in FILE, one a line" }
/* Per-object reports (programs/uevm/report.c). */
#define JSON_ROWS \
	{ 0, "json", NULL, "one JSON document on stdout: the objects listed and a summary (uevm(1), JSON OUTPUT)" }, \
	{ 0, "ndjson", NULL, "one JSON object a line, as each object is done (no order), then the summary" }
#define REPORT_ROWS JSON_ROWS, \
	{ 'q', "quiet", NULL, "print nothing but failures and errors; the exit status tells" }

static const struct help_opt label_opts[] = {
	WALK_ROWS, ALGO_ROW, VERBOSE_ROW, HMAC_KEY_ROW, HMAC_LAYOUT_ROWS,
	PATH_ROWS, REPORT_ROWS,
	/* Manifests (programs/uevm/manifest.c). */
	{ 0, "manifest", "FILE", "also write a manifest of what was labelled to FILE" },
	{ 0, "sign-key", "KEY", "with --manifest, sign the manifest with this private key" },
	HELP_ROW, END_ROW,
};

static const struct help_opt verify_opts[] = {
	WALK_ROWS,
	{ 'v', "verbose", NULL, "print every object, not only the failed ones" },
	HMAC_KEY_ROW, HMAC_LAYOUT_ROWS,
	{ 0, "cert", "CERT", "an X.509 certificate (PEM or DER) to check signatures with (repeatable)" },
	{ 0, "allow-weak-keys", NULL, "accept RSA under 2048 bits, P-192 and SM2 keys, with a warning" },
	{ 0, "imasig", NULL, "require a signature in security.ima (appraise_type=imasig)" },
	{ 0, "fix-evm-sig", NULL, "replace a valid EVM signature (0x03) by the HMAC, as the kernel's fix mode does" },
	PATH_ROWS, REPORT_ROWS,
	/* Per-object reports (programs/uevm/report.c). */
	{ 0, "min-hash", "ALGO", "fail a digest or signature in security.ima or security.evm made with a hash weaker than ALGO" },
	/* Manifests (programs/uevm/manifest.c). */
	{ 0, "manifest", "FILE", "compare the tree with the manifest in FILE too" },
	HELP_ROW, END_ROW,
};

static const struct help_opt hmac_opts[] = {
	HMAC_KEY_ROW, HMAC_LAYOUT_ROWS, JSON_ROWS, HELP_ROW, END_ROW,
};

static const struct help_opt ima_hash_opts[] = {
	ALGO_ROW, JSON_ROWS,
	{ '0', "null", NULL, "end each \"VALUE  PATH\" with a NUL, the path's bytes unescaped" },
	HELP_ROW, END_ROW,
};

static const struct help_opt clear_opts[] = {
	WALK_ROWS,
	{ 'v', "verbose", NULL, "list every object cleared on stdout" },
	PATH_ROWS, REPORT_ROWS, HELP_ROW, END_ROW,
};

static const struct help_opt sign_opts[] = {
	WALK_ROWS, ALGO_ROW,
	{ 'v', "verbose", NULL, "print every object signed or skipped, and the key used" },
	{ 'k', "key", "KEY", "the private key: a PEM or DER file, or a pkcs11: URI" },
	{ 0, "pass-file", "FILE", "the key's pass phrase, from the first line of FILE" },
	{ 0, "imasig", NULL, "write an IMA signature in security.ima (the default)" },
	{ 0, "evm", NULL, "write an EVM signature in security.evm" },
	{ 0, "portable", NULL, "a portable EVM signature (implies --evm)" },
	{ 0, "sigv3", NULL, "signature format version 3 (default 2); Keylime checks version 2 only" },
	{ 0, "keyid", "HEX", "the 32-bit key identifier to write in signatures" },
	{ 0, "keyid-from-cert", "CERT", "take the key identifier from this certificate" },
	{ 0, "allow-weak-keys", NULL, "accept RSA under 2048 bits, P-192 and SM2 keys, with a warning" },
	HMAC_LAYOUT_ROWS, PATH_ROWS, REPORT_ROWS, HELP_ROW, END_ROW,
};

static const struct help_opt mount_opts[] = {
	{ 0, "hmac-key", "KEY", "the EVM HMAC key, its form named (as -o key=KEY)" },
	{ 'o', NULL, "key=KEY", "the HMAC key (also hmac_key=KEY)" },
	{ 'o', NULL, "mode=MODE", "enforce (default), log, fix or off" },
	{ 'o', NULL, "policy=POLICY", "a policy file, a built-in name, 'default' or 'none'" },
	{ 'o', NULL, "ml=PATH", "the measurement list file ('memory', 'none'; with tcti= the host list)" },
	{ 'o', NULL, "kernel_ml=PATH", "the kernel's binary list, adopted as a new host list's prefix ('none')" },
	{ 'o', NULL, "tcti=TCTI", "the TPM the list extends (host=, port= right after it continue it)" },
	{ 'o', NULL, "pcr=N", "the list's PCR (default 10)" },
	{ 'o', NULL, "norotate_stale", "refuse a list of a previous boot (TPM reset) instead of moving it to .prev" },
	{ 'o', NULL, "template=NAME", "the list's template (default ima-ng)" },
	{ 'o', NULL, "measure_path=WHICH", "paths in measurements and audit: mount (as opened; default) or source" },
	{ 'o', NULL, "securityfs=DIR", "the control tree (evm, ima/policy, lists), or 'none'" },
	{ 'o', NULL, "evm=BITS", "written to evm at start (default 1 with a key, else 0)" },
	{ 'o', NULL, "audit_log=FILE", "also append audit records to FILE" },
	{ 'o', NULL, "syslog_socket=PATH", "the syslog socket (default /dev/log)" },
	{ 'o', NULL, "nosyslog", "no audit records to syslog" },
	{ 'o', NULL, "noauditd", "no audit records to auditd" },
	{ 'o', NULL, "integrity_audit", "informational audit records too" },
	{ 'o', NULL, "hash=ALGO", "the hash of new labels (default sha256)" },
	{ 'o', NULL, "uuid=UUID|none", "the filesystem UUID bound into HMACs, as for uevm label" },
	{ 'o', NULL, "m32", "the HMAC layout of a 32-bit kernel, as for uevm label" },
	{ 'o', NULL, "evm_xattrs=NAME[:NAME...]", "more protected security.* names, as for uevm label" },
	{ 'o', NULL, "timeout=SECONDS", "attribute and entry cache time (default 1)" },
	{ 'o', NULL, "readahead=KB", "the mount's read-ahead (default 4 read requests: 4032)" },
	{ 'o', NULL, "max_threads=N", "FUSE worker threads (default 16)" },
	{ 'o', NULL, "fastopen[=auto|on|off]", "the kernel opens files itself; reads are appraised at the first read (default auto)" },
	{ 'o', NULL, "nofastopen", "as fastopen=off: the per-open hooks" },
	{ 'o', NULL, "write_idle=SECONDS", "with fastopen: relabel after this long without a write" },
	{ 'o', NULL, "stop_timeout=SECONDS", "with fastopen: how long a stop waits for page drops and a relabel under way (default 30)" },
	{ 'o', NULL, "debug", "as -d" },
	{ 'f', NULL, NULL, "stay in the foreground" },
	{ 'd', NULL, NULL, "debug output (implies -f)" },
	{ 's', NULL, NULL, "single-threaded" },
	{ 'V', "version", NULL, "print uevmfs's and FUSE's versions" },
	HELP_ROW, END_ROW,
};

static const struct help_opt socket_row[] = {
	{ 0, "socket", "PATH", "uevmd's socket (default $UEVMD_SOCKET, else /run/uevm/uevmd.sock)" },
	HELP_ROW, END_ROW,
};

static const struct help_opt status_opts[] = {
	{ 0, "policy", NULL, "print the IMA policy uevmd enforces instead" },
	{ 0, "socket", "PATH", "uevmd's socket (default $UEVMD_SOCKET, else /run/uevm/uevmd.sock)" },
	HELP_ROW, END_ROW,
};

static const struct help_opt enable_opts[] = {
	{ 0, "mode", "MODE", "enforce, log, fix or off" },
	{ 0, "socket", "PATH", "uevmd's socket (default $UEVMD_SOCKET, else /run/uevm/uevmd.sock)" },
	HELP_ROW, END_ROW,
};

#define KEY_OUT_ROW { 0, "out", "FILE", "the new key file (never overwritten)" }
#define KEY_PASSFD_ROW { 0, "passphrase-fd", "N", "read the pass phrase from file descriptor N, not the terminal" }
#define KEY_TCTI_ROW { 0, "tcti", "TCTI", "the TPM to use (tpm2-tss TCTI string)" }
#define KEY_PROTECT_ROWS \
	KEY_OUT_ROW, KEY_PASSFD_ROW, \
	{ 0, "tpm", NULL, "seal the key to the TPM instead of a pass phrase" }, \
	{ 0, "pcrs", "LIST", "with --tpm, bind the seal to these sha256 PCRs (0,7)" }, \
	KEY_TCTI_ROW, \
	{ 0, "plain", "FILE", "also write the key in plain text to FILE (mode 0600)" }, \
	{ 0, "kdf-ops", "N", "Argon2id passes, 1 to 64" }, \
	{ 0, "kdf-mem", "MIB", "Argon2id memory, 1 to 4096 MiB" }
#define KEY_NAME_ROW { 0, "name", "NAME", "the user key's description (default evm-key)" }
#define KEY_MASTER_ROW { 0, "master-key", "FILE", "the master key of a kernel-blob key" }

static const struct help_opt key_generate_opts[] = {
	KEY_PROTECT_ROWS,
	{ 0, "size", "N", "key size in bytes, 1 to 128 (default 32)" },
	HELP_ROW, END_ROW,
};

static const struct help_opt key_load_opts[] = {
	KEY_NAME_ROW,
	{ 0, "keyring", "KR", "@u (default), @s, @us, @p, @t or a keyring serial number" },
	{ 0, "passphrase-fd", "N", "read a passphrase: key's pass phrase from file descriptor N" },
	KEY_MASTER_ROW, KEY_TCTI_ROW, HELP_ROW, END_ROW,
};

static const struct help_opt key_status_opts[] = {
	KEY_NAME_ROW, HELP_ROW, END_ROW,
};

static const struct help_opt key_export_opts[] = {
	{ 0, "kernel-blob", NULL, "write a kernel \"encrypted\" key blob" },
	{ 0, "master-key", "FILE", "the master key that encrypts the blob" },
	{ 0, "master-desc", "DESC", "the master key's kernel description (user:NAME)" },
	{ 0, "iv", "HEX", "the blob's IV (default random)" },
	{ 0, "out", "FILE", "write the blob to FILE, not stdout" },
	{ 0, "plain", "FILE", "write the key in plain text to FILE instead (mode 0600)" },
	{ 0, "passphrase-fd", "N", "read the input key's pass phrase from file descriptor N" },
	KEY_TCTI_ROW, HELP_ROW, END_ROW,
};

static const struct help_opt key_import_opts[] = {
	KEY_PROTECT_ROWS,
	{ 0, "kernel-blob", NULL, "the operand is a kernel blob file (needs --master-key)" },
	KEY_MASTER_ROW, HELP_ROW, END_ROW,
};

static const struct help_opt policy_check_opts[] = {
	{ 'v', "verbose", NULL, "also print the rules as parsed" },
	HELP_ROW, END_ROW,
};

static const struct help_opt help_only[] = { HELP_ROW, END_ROW };

static const struct help_opt diff_opts[] = {
	{ 'k', "hmac-key", "KEY", "the EVM key of HMAC-authenticated manifests, its form named (raw:FILE, ...)" },
	{ 0, "cert", "CERT", "an X.509 certificate (PEM or DER) to check signed manifests with (repeatable)" },
	{ 0, "allow-weak-keys", NULL, "accept RSA under 2048 bits, P-192 and SM2 keys, with a warning" },
	{ 0, "json", NULL, "one JSON document on stdout: every difference and a summary" },
	HELP_ROW, END_ROW,
};

#define ASCII_INPUT_ROW { 0, "ascii-input", NULL, "LIST is in the ASCII form (ascii_runtime_measurements)" }

static const struct help_opt ml_show_opts[] = {
	{ 0, "ascii", NULL, "the kernel's ASCII form (the default)" },
	{ 0, "binary", NULL, "the binary form, as binary_runtime_measurements" },
	{ 0, "json", NULL, "a JSON array of entries and their fields" },
	{ 0, "bank", "ALGO", "the bank of the template digests shown (default sha1)" },
	ASCII_INPUT_ROW, HELP_ROW, END_ROW,
};

static const struct help_opt ml_replay_opts[] = {
	{ 0, "bank", "ALGO", "replay this bank (repeatable; default sha1 and sha256)" },
	{ 0, "json", NULL, "the PCR values as JSON" },
	ASCII_INPUT_ROW, HELP_ROW, END_ROW,
};

static const struct help_opt ml_verify_opts[] = {
	{ 0, "pcrs", "[ALGO,]FILE", "the PCR values to compare with (repeatable; sha1 without ALGO)" },
	{ 0, "tcti", "TCTI", "read the PCRs of every bank from this TPM instead" },
	{ 0, "pcr", "N", "compare PCR N (repeatable; default 10)" },
	{ 'v', "verbose", NULL, "print every PCR compared" },
	ASCII_INPUT_ROW, HELP_ROW, END_ROW,
};

static const struct help_opt ml_add_opts[] = {
	{ 0, "list", "FILE", "the measurement list to add to (created if missing)" },
	{ 0, "tcti", "TCTI|none", "the TPM to extend ($UEVM_TCTI; none: software PCRs)" },
	{ 0, "template", "NAME", "the template or a format such as d-ng|n-ng|sig (default ima-ng)" },
	{ 0, "pcr", "N", "the PCR to extend (default 10)" },
	{ 'a', "hash-algo", "ALGO", "hash of the files (default sha256)" },
	{ 0, "violation", "NAME", "record a violation for NAME (repeatable)" },
	{ 0, "rotate-stale", NULL, "move aside a list the TPM no longer matches and start anew" },
	{ 0, "no-sync", NULL, "do not fdatasync the list after each entry" },
	{ 0, "hmac-key", "KEY", "the key of the MAC record that protects a list with software PCRs" },
	{ 'v', "verbose", NULL, "print the list's state and every entry added" },
	HELP_ROW, END_ROW,
};

static const struct help_opt ml_daemon_opts[] = {
	{ 0, "ascii", NULL, "the ASCII form (the default)" },
	{ 0, "binary", NULL, "the binary form" },
	{ 0, "count", NULL, "only the number of entries" },
	{ 0, "algo", "ALGO", "the bank of the template digests shown" },
	{ 0, "socket", "PATH", "uevmd's socket (default $UEVMD_SOCKET, else /run/uevm/uevmd.sock)" },
	HELP_ROW, END_ROW,
};

/* Keylime runtime policies (programs/uevm/rp_create.c, rp_check.c). */
static const struct help_opt rp_create_opts[] = {
	{ 'o', "output", "FILE", "write the policy to FILE (default: standard output)" },
	{ 0, "list", "FILE", "take the entries of an ASCII measurement list (repeatable)" },
	{ 'a', "hash-algo", "ALGO", "the digest of files in trees, as the host measures them (default sha256)" },
	{ 0, "hash", NULL, "hash every file; a security.ima digest that differs is an error" },
	{ 0, "prefix", "PATH", "the path the host records for each PATH operand (its files below it)" },
	{ 0, "map", "SRC=DST", "record files under SRC as under DST, e.g. a uevmfs mount point (repeatable)" },
	{ 0, "exclude", "REGEX", "a Python regex for \"excludes\", also left out here (repeatable)" },
	{ 0, "exclude-from", "FILE", "the excludes listed in FILE, one a line" },
	{ 0, "skip", "GLOB", "do not walk objects matching GLOB (not in the policy; repeatable)" },
	{ 0, "cert", "FILE", "an IMA signing certificate or public key for \"verification-keys\" (repeatable)" },
	{ 0, "boot-aggregate", "HEX", "accept this boot_aggregate digest (repeatable)" },
	{ 0, "log-hash-alg", "ALGO", "ima.log_hash_alg: the list's template digest (default: the --list's, else sha1)" },
	{ 0, "ignored-keyring", "NAME", "ima.ignored_keyrings: keys not learned from NAME ('*': none; repeatable)" },
	{ 0, "release", "N", "the policy's release number (default 0)" },
	{ 0, "timestamp", NULL, "add meta.timestamp: $SOURCE_DATE_EPOCH if set, else now" },
	{ 'x', "one-file-system", NULL, "leave out objects on other filesystems" },
	{ 'P', "no-dereference", NULL, "never follow a symbolic link given as PATH" },
	{ 0, "root", "DIR", "resolve every PATH beneath DIR; paths are named as seen from inside it" },
	{ 'j', "jobs", "N", "worker threads, 1 to 1024 (default: the online CPUs)" },
	{ 'v', "verbose", NULL, "a summary on stderr" },
	HELP_ROW, END_ROW,
};

static const struct help_opt rp_check_opts[] = {
	{ 0, "boot-aggregate", "HEX", "accept this boot_aggregate, as Keylime does the ones it computes from the boot log (repeatable)" },
	{ 0, "json", NULL, "the failures and a summary as one JSON document" },
	{ 'v', "verbose", NULL, "also print every entry that passed, and how" },
	HELP_ROW, END_ROW,
};

static const struct help_entry entries[] = {
	{ "label", NULL,
	  "Writes security.ima (the content's hash) on every regular file and then "
	  "security.evm (an HMAC over the protected attributes and metadata) on every "
	  "object, byte for byte as the kernel would. Objects that cannot be labelled "
	  "are reported and the rest goes on. Writing security.* needs CAP_SYS_ADMIN.",
	  label_opts },
	{ "verify", NULL,
	  "Appraises every object as the kernel's EVM and IMA would and prints one line "
	  "per failed object (every object with -v) and a summary. Exit status 1 when "
	  "an object failed. Signed trees verify with --cert alone.",
	  verify_opts },
	{ "hmac", NULL,
	  "Prints the security.evm value each FILE would get with KEY, without writing it.",
	  hmac_opts },
	{ "ima-hash", NULL,
	  "Prints the security.ima value each regular FILE would get, without writing it.",
	  ima_hash_opts },
	{ "sign", NULL,
	  "Writes IMA signatures (security.ima) or EVM signatures (security.evm) made "
	  "with a private key; no HMAC key is needed. Writing security.* needs "
	  "CAP_SYS_ADMIN.",
	  sign_opts },
	{ "evmctl", NULL,
	  "evmctl 1.6's command line, with its result lines and exit codes "
	  "(see uevm-evmctl(1)); also run as a link named evmctl.",
	  NULL },
	{ "clear", NULL,
	  "Removes security.evm and then security.ima from every object, as evmctl "
	  "ima_clear does. Removing security.* needs CAP_SYS_ADMIN.",
	  clear_opts },
	{ "key", NULL,
	  "The EVM HMAC key's life cycle: generate a key in a protected form "
	  "(pass phrase or TPM), load it onto the kernel keyring, show which key is in "
	  "use, export it as a kernel blob, import one.",
	  help_only },
	{ "key generate",
	  "--out FILE [--size N] [--passphrase-fd N | --tpm [--pcrs LIST]] [--plain FILE]",
	  "Generates a random key and writes it only in a protected form: wrapped "
	  "with a pass phrase (Argon2id, XChaCha20-Poly1305) or sealed to the TPM.",
	  key_generate_opts },
	{ "key load",
	  "[--name NAME] [--keyring KR] [--passphrase-fd N] [--master-key M] KEYSPEC",
	  "Unwraps or unseals KEYSPEC and puts the key on a kernel keyring as a user "
	  "key, where --hmac-key keyring:NAME takes it (and burns it).",
	  key_load_opts },
	{ "key status", "[--name NAME] [FILE...]",
	  "Says whether the user key NAME is on the keyring (its fingerprint, never "
	  "the key) and what each key FILE is.",
	  key_status_opts },
	{ "key export",
	  "--kernel-blob --master-key M [--master-desc user:NAME] [--iv HEX] [--out FILE] KEYSPEC | --plain FILE KEYSPEC",
	  "Writes a key as a kernel \"encrypted\" key blob, or, explicitly, in plain text.",
	  key_export_opts },
	{ "key import",
	  "(--kernel-blob BLOB --master-key M | KEYSPEC) --out FILE [--passphrase-fd N | --tpm [--pcrs LIST]]",
	  "Reads a key in any form (a kernel blob, ...) and writes it in a protected form.",
	  key_import_opts },
	{ "policy", NULL,
	  "Checks an IMA policy file, prints a built-in policy, or loads a policy "
	  "into the running uevmd(8).",
	  help_only },
	{ "policy check", "[-v] FILE",
	  "Parses FILE as the kernel would and says whether it is valid; "
	  "errors are reported as FILE:LINE: cause. Exit status 1 when it is not.",
	  policy_check_opts },
	{ "policy show", "tcb|appraise_tcb|secure_boot|...",
	  "Prints a built-in policy (the kernel's ima_policy= names).",
	  help_only },
	{ "policy load", "[--socket PATH] FILE",
	  "Replaces the IMA policy of the running uevmd(8), whole or not at all.",
	  socket_row },
	{ "measurements", NULL,
	  "Shows, replays and verifies IMA measurement lists (the kernel's binary or "
	  "ASCII form), adds files to a list kept in a file, and reads uevmd's list.",
	  help_only },
	{ "measurements show", "[--ascii|--binary|--json] [--bank ALGO] [--ascii-input] LIST",
	  "Prints the entries of LIST ('-': stdin) and checks each template digest.",
	  ml_show_opts },
	{ "measurements replay", "[--bank ALGO]... [--json] [--ascii-input] LIST",
	  "Computes the PCR values LIST leads to, from zeroed PCRs.",
	  ml_replay_opts },
	{ "measurements verify",
	  "[--pcrs [ALGO,]FILE]... [--tcti TCTI] [--pcr N]... [-v] [--ascii-input] LIST",
	  "Replays LIST and compares every PCR it extends with given values or a "
	  "TPM's. Exit status 1 on a mismatch.",
	  ml_verify_opts },
	{ "measurements add",
	  "--list FILE [--tcti TCTI|none] [--template NAME] [--pcr N] [-a ALGO] [--violation NAME]... [--rotate-stale] [--no-sync] [--hmac-key KEY] [-v] [FILE...]",
	  "Measures FILEs into a list kept in a file, extending a TPM or software PCRs.",
	  ml_add_opts },
	{ "measurements daemon", "[--ascii|--binary|--count] [--algo ALGO] [--socket PATH]",
	  "Prints the measurement list of the running uevmd(8).",
	  ml_daemon_opts },
	{ "mount", NULL,
	  "Runs uevmfs(8): SOURCE is shown at MOUNTPOINT (default: over SOURCE) "
	  "through a FUSE filesystem on which every open, exec, write and attribute "
	  "change passes through the EVM and IMA hooks. Other -o options go to FUSE.",
	  mount_opts },
	{ "status", NULL,
	  "Asks the running uevmd(8) what it enforces and prints its counters.",
	  status_opts },
	{ "enable", NULL,
	  "Initialises EVM in the running uevmd(8), as echo 1 > evm does, and sets its mode.",
	  enable_opts },
	{ "runtime-policy", NULL,
	  "Makes Keylime runtime policies (JSON, schema version 1) for hosts that "
	  "uevm measures, and checks a measurement list against one the way "
	  "Keylime's verifier does, before deployment.",
	  help_only },
	{ "runtime-policy create",
	  "[-o FILE] [--list FILE]... [-a ALGO] [--hash] [--prefix PATH | --map SRC=DST...] [--exclude REGEX]... [--cert FILE]... [--boot-aggregate HEX]... [--log-hash-alg ALGO] [OPTION...] [PATH...]",
	  "Writes a runtime policy for the files under each PATH (walked "
	  "recursively), named as the host records them, and for the entries of "
	  "ASCII measurement lists. Digests come from security.ima, or from the "
	  "content when it holds no digest of ALGO. Files signed by a --cert key "
	  "are covered by verification-keys instead. Sorted output, the same for "
	  "the same input.",
	  rp_create_opts },
	{ "runtime-policy check", "[--json] [-v] [--boot-aggregate HEX]... POLICY LIST",
	  "Evaluates the ASCII measurement list LIST against POLICY as Keylime's "
	  "verifier does (template digests, PCR, excludes, digests, signatures, "
	  "keyrings, ima-buf) and prints each failure. Exit status 1 when an "
	  "entry fails, 2 when POLICY or LIST cannot be read.",
	  rp_check_opts },
	/* Manifests (programs/uevm/manifest.c). */
	{ "diff", NULL,
	  "Compares two manifests that uevm label --manifest wrote (two labelled releases of a tree), after authenticating both, and explains each difference in words: owner, mode, content, protected xattrs, ACLs, symlink targets, new and deleted objects.",
	  diff_opts },
};

const struct help_entry *help_find(const char *name)
{
	for (size_t i = 0; i < sizeof(entries) / sizeof(entries[0]); i++)
		if (!strcmp(entries[i].name, name))
			return &entries[i];
	return NULL;
}

/* "-k, --hmac-key KEY" */
static int opt_form(const struct help_opt *o, char *buf, size_t len)
{
	const char *sep = o->long_name && o->arg ? " " : "";

	if (o->short_name && o->long_name)
		return snprintf(buf, len, "-%c, --%s%s%s", o->short_name,
				o->long_name, sep, o->arg ? o->arg : "");
	if (o->short_name)
		return snprintf(buf, len, "-%c%s%s", o->short_name,
				o->arg ? " " : "", o->arg ? o->arg : "");
	return snprintf(buf, len, "    --%s%s%s", o->long_name, sep,
			o->arg ? o->arg : "");
}

/* TEXT wrapped at 78 columns, each line indented by INDENT. */
static void print_wrapped(const char *text, int indent, int first)
{
	int col = first;

	while (*text) {
		size_t w = strcspn(text, " ");

		if (col > indent && col + 1 + (int)w > 78) {
			printf("\n%*s", indent, "");
			col = indent;
		} else if (col > indent) {
			putchar(' ');
			col++;
		} else if (col < indent) {
			printf("%*s", indent - col, "");
			col = indent;
		}
		printf("%.*s", (int)w, text);
		col += (int)w;
		text += w;
		while (*text == ' ')
			text++;
	}
	putchar('\n');
}

static void print_subcommands(const char *name)
{
	size_t n = strlen(name);
	bool first = true;

	for (size_t i = 0; i < sizeof(entries) / sizeof(entries[0]); i++) {
		const struct help_entry *e = &entries[i];

		if (strncmp(e->name, name, n) || e->name[n] != ' ')
			continue;
		if (first)
			printf("\nSubcommands ('%s %s SUBCOMMAND --help' shows one's options):\n",
			       prog_name, name);
		first = false;
		printf("  %s %s %s\n", prog_name, e->name, e->usage);
	}
}

int help_show(const char *name)
{
	const struct help_entry *e = help_find(name);
	const struct command *cmd;
	const char *use;

	if (!e) {
		error_msg("no help for '%s': '%s help' lists the commands", name,
			  prog_name);
		return EXIT_USAGE;
	}
	use = e->usage;
	if (!use) {
		cmd = command_find(name);
		use = cmd ? cmd->usage : "";
	}
	printf("Usage: %s %s %s\n\n", prog_name, name, use);
	print_wrapped(e->about, 0, 0);
	print_subcommands(name);
	if (e->opts && e->opts[0].text) {
		printf("\nOptions:\n");
		for (const struct help_opt *o = e->opts; o->text; o++) {
			char form[80];
			int n = opt_form(o, form, sizeof(form));

			printf("  %s", form);
			print_wrapped(o->text, 30, n + 2);
		}
	}
	printf("\nSee uevm-%.*s(1).\n", (int)strcspn(name, " "), name);
	return fflush(stdout) ? EXIT_ERROR : 0;
}

int help_main(int argc, char **argv)
{
	char name[128];

	if (argc < 2) {
		commands_list(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "evmctl")) {
		/* evmctl's own help, as `uevm evmctl --help` prints it. */
		char *args[] = { (char *)"evmctl", (char *)"--help", NULL };

		return evmctl_main(2, args);
	}
	snprintf(name, sizeof(name), "%s%s%s", argv[1], argc > 2 ? " " : "",
		 argc > 2 ? argv[2] : "");
	if (argc > 3 || !help_find(name) ||
	    (!strchr(name, ' ') && !command_find(name))) {
		error_msg("help: no command '%s'", name);
		commands_list(stderr);
		return EXIT_USAGE;
	}
	return help_show(name);
}

/* "uevm CMD: message", the form of getopt's messages under a command. */
static void cmd_error(const char *name, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void cmd_error(const char *name, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s %s: ", prog_name, name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* The other commands (and subcommands) whose table has OPT, as
 * "label, verify". */
static void where_is(const char *name, const char *opt, char *out, size_t len)
{
	size_t used = 0;

	out[0] = '\0';
	for (size_t i = 0; i < sizeof(entries) / sizeof(entries[0]); i++) {
		const struct help_entry *e = &entries[i];
		bool has = false;

		if (!e->opts || !strcmp(e->name, name) ||
		    (!strchr(e->name, ' ') && !command_find(e->name)))
			continue;
		for (const struct help_opt *o = e->opts; o->text && !has; o++)
			has = opt[1] == '-' ? o->long_name && !strcmp(o->long_name, opt + 2)
					    : o->short_name == opt[1];
		if (has && used + strlen(e->name) + 3 < len)
			used += (size_t)snprintf(out + used, len - used, "%s%s",
						 used ? ", " : "", e->name);
	}
}

int opt_not_here(const char *name, const char *opt)
{
	char where[512];

	where_is(name, opt, where, sizeof(where));
	if (*where)
		cmd_error(name, "%s is not an option of '%s' (it is one of: %s)",
			  opt, name, where);
	else
		cmd_error(name, "unrecognized option '%s'", opt);
	fprintf(stderr, "Try '%s %s --help' for its options.\n", prog_name, name);
	return EXIT_USAGE;
}

/* The long option ARG ("--name[=value]") names, resolved as getopt does
 * (exact, else a unique prefix) among all commands' options. */
static void long_name_of(const char *arg, char *out, size_t len)
{
	size_t n = strcspn(arg + 2, "=");
	const char *found = NULL;
	int matches = 0;

	snprintf(out, len, "--%.*s", (int)n, arg + 2);
	for (size_t i = 0; i < sizeof(entries) / sizeof(entries[0]); i++) {
		if (!entries[i].opts)
			continue;
		for (const struct help_opt *o = entries[i].opts; o->text; o++) {
			if (!o->long_name || strncmp(o->long_name, arg + 2, n))
				continue;
			if (strlen(o->long_name) == n) {
				snprintf(out, len, "--%s", o->long_name);
				return;
			}
			if (!found || strcmp(found, o->long_name))
				matches++;
			found = o->long_name;
		}
	}
	if (matches == 1)
		snprintf(out, len, "--%s", found);
}

/* The element of ARGV holding the option just parsed: getopt leaves
 * optind after it, or on it inside a cluster of short options. */
static const char *current_arg(int argc, char **argv, int c)
{
	if (optind < argc && c > 0 && c < 128 && argv[optind][0] == '-' &&
	    argv[optind][1] != '-' && strchr(argv[optind] + 1, c))
		return argv[optind];
	for (int i = optind - 1; i >= 1 && i >= optind - 2; i--)
		if (argv[i][0] == '-' && argv[i][1])
			return argv[i];
	return "";
}

/* The getopt entry a "--name[=value]" argument resolves to, or NULL. */
static const struct option *long_entry(const struct option *longopts,
				       const char *arg, int *nmatch)
{
	size_t n = strcspn(arg + 2, "=");
	const struct option *found = NULL;

	*nmatch = 0;
	for (const struct option *lo = longopts; lo && lo->name; lo++) {
		if (strncmp(lo->name, arg + 2, n))
			continue;
		if (strlen(lo->name) == n) {
			*nmatch = 1;
			return lo;
		}
		if (!found || found->val != lo->val)
			(*nmatch)++;
		found = lo;
	}
	return *nmatch == 1 ? found : NULL;
}

int opt_fail(const char *name, int c, int argc, char **argv,
	     const char *shortopts, const struct option *longopts)
{
	const char *arg = current_arg(argc, argv, c == '?' ? optopt : c);
	const struct option *lo = NULL;
	char opt[128];
	int nmatch = 0;

	if (!strncmp(arg, "--", 2))
		lo = long_entry(longopts, arg, &nmatch);
	if (c != '?') {
		/* getopt took it; the command does not. */
		if (lo && lo->val == c)
			snprintf(opt, sizeof(opt), "--%s", lo->name);
		else
			snprintf(opt, sizeof(opt), "-%c", c);
		return opt_not_here(name, opt);
	}
	if (!strncmp(arg, "--", 2)) {
		if (lo && lo->has_arg == no_argument && strchr(arg, '=')) {
			cmd_error(name, "option '--%s' does not take an argument",
				  lo->name);
		} else if (lo) {
			cmd_error(name, "option '--%s' needs an argument", lo->name);
		} else if (nmatch > 1) {
			cmd_error(name, "option '%.*s' is ambiguous",
				  (int)strcspn(arg, "="), arg);
		} else {
			long_name_of(arg, opt, sizeof(opt));
			return opt_not_here(name, opt);
		}
	} else if (optopt == 'h') {
		return help_show(name);
	} else if (optopt && strchr(shortopts, optopt)) {
		cmd_error(name, "option '-%c' needs an argument", optopt);
	} else {
		snprintf(opt, sizeof(opt), "-%c", optopt ? optopt : '?');
		return opt_not_here(name, opt);
	}
	fprintf(stderr, "Try '%s %s --help' for its options.\n", prog_name, name);
	return EXIT_USAGE;
}
