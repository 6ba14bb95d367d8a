// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * uevmd's control requests as they come off the socket
 * (programs/uevmd/control_parse.c), then the argument checks serve() makes
 * (integrity_mode_parse for enable/mode, the bank name for measurements).
 * Properties: at most CONTROL_MAX_ARGS non-empty words inside the buffer,
 * none holding a space or a newline; the verb is the first word's.
 */
#include "fuzz.h"
#include "uevmd.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* serve() reads at most 4095 bytes into a 4096-byte buffer */
	size_t n = size > 4095 ? 4095 : size;
	char *buf = malloc(n + 1);
	struct control_request r;

	if (!buf)
		abort();
	memcpy(buf, data, n);
	control_request_parse(buf, n, &r);
	FUZZ_ASSERT(r.argc >= 0 && r.argc <= CONTROL_MAX_ARGS);
	FUZZ_ASSERT((r.argc == 0) == (r.verb == CTL_EMPTY));
	for (int i = 0; i < r.argc; i++) {
		size_t l = strlen(r.argv[i]);

		FUZZ_ASSERT(r.argv[i] >= buf && r.argv[i] + l <= buf + n);
		FUZZ_ASSERT(l > 0 && !strchr(r.argv[i], ' ') && !strchr(r.argv[i], '\n'));
		FUZZ_ASSERT(!memchr(data, '\n', (size_t)(r.argv[i] - buf)));
	}
	if (r.argc) {
		FUZZ_ASSERT((r.verb == CTL_STATUS) == !strcmp(r.argv[0], "status"));
		FUZZ_ASSERT((r.verb == CTL_MEASUREMENTS) ==
			    (!strcmp(r.argv[0], "measurements") && r.argc >= 2));
		FUZZ_ASSERT(control_verb_privileged(r.verb) ==
			    (r.verb != CTL_STATUS && r.verb != CTL_MEASUREMENTS &&
			     r.verb != CTL_POLICY_SHOW));
	}
	if ((r.verb == CTL_ENABLE || r.verb == CTL_MODE) && r.argc > 1) {
		enum integrity_mode m;

		if (integrity_mode_parse(r.argv[1], &m) == 0)
			FUZZ_ASSERT(m <= INTEGRITY_MODE_OFF);
		else
			FUZZ_ASSERT(uevm_last_error()[0]);
	}
	if (r.verb == CTL_MEASUREMENTS && r.argc > 2)
		(void)uevm_hash_algo_by_name(r.argv[2]);
	free(buf);
	return 0;
}
