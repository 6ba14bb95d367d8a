// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Two watchdogs.  Per event: an open whose answer is not written within
 * deadline_ms is answered with the configured default (on_timeout) and
 * logged, so a worker stuck in a TPM or on a hung disk cannot hang the
 * host.  For the whole daemon: systemd's WatchdogSec= gets WATCHDOG=1 only
 * while the reader keeps reading and no worker has been stuck longer than
 * wedged_sec; otherwise systemd restarts uevmd.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include "uevmd.h"

static pthread_t dog;
static bool started;

static void *watchdog_main(void *arg)
{
	uint64_t wd_usec = sd_watchdog_usec();
	int64_t tick = (int64_t)D->cfg.deadline_ms * 1000000LL / 4, last_ping = 0;
	struct pollfd pfd = { D->stop_efd, POLLIN, 0 };
	bool wedged_logged = false;

	(void)arg;
	own_tid_register();
	if (tick < 5000000LL)
		tick = 5000000LL;
	if (tick > 250000000LL)
		tick = 250000000LL;
	for (;;) {
		int64_t now, oldest;
		bool healthy;

		if (poll(&pfd, 1, (int)(tick / 1000000LL)) > 0)
			break;
		now = mono_ns();
		oldest = perm_expire(now);
		healthy = now - perm_reader_heartbeat() < 5000000000LL &&
			  oldest < (int64_t)D->cfg.wedged_sec * 1000000000LL;
		if (!healthy && !wedged_logged) {
			ulog(LOG_ERR, "a worker has been stuck for %lld s (or the reader "
			     "stopped): no more watchdog pings", (long long)(oldest / 1000000000LL));
			wedged_logged = true;
		}
		if (wd_usec && healthy &&
		    now - last_ping >= (int64_t)wd_usec * 1000LL / 2) {
			sd_notifyf("WATCHDOG=1");
			last_ping = now;
		}
	}
	return NULL;
}

int watchdog_start(void)
{
	int ret = pthread_create(&dog, NULL, watchdog_main, NULL);

	started = ret == 0;
	return -ret;
}

void watchdog_stop(void)
{
	if (started)
		pthread_join(dog, NULL);
	started = false;
}
