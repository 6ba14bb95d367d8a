// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libaudit is loaded only when records go to a running auditd, and its
 * absence then is a warning, not a failure.  Runs in a mount namespace of
 * its own (root): a tmpfs on /run holds a fake auditd.pid, and for the
 * missing case the library's file is covered by /dev/null.
 */
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>
#include "integrity_private.h"
#include "test.h"

/* The file libaudit.so.1 is mapped from, or "" when it is not mapped. */
static void mapped_libaudit(char *out, size_t len)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];

	out[0] = '\0';
	while (f && fgets(line, sizeof(line), f)) {
		char *p = strchr(line, '/');

		if (p && strstr(p, "/libaudit.so.1")) {
			p[strcspn(p, "\n")] = '\0';
			snprintf(out, len, "%s", p);
			break;
		}
	}
	if (f)
		fclose(f);
}

static char warning[512];

static void on_warn(void *arg, const char *msg)
{
	(void)arg;
	snprintf(warning, sizeof(warning), "%s", msg);
}

static int open_auditd(struct integrity_sys *s)
{
	memset(s, 0, sizeof(*s));
	s->audit.to_auditd = true;
	return integrity_audit_open(s);
}

/* Re-executed with the library's path: it is missing in this process. */
static int missing(const char *path)
{
	struct integrity_sys s;
	char now[512];

	CHECK("missing: /dev/null covers the library",
	      mount("/dev/null", path, NULL, MS_BIND, NULL) == 0);
	uevm_set_warn_handler(on_warn, NULL);
	CHECK("missing: opening the audit outputs still succeeds", open_auditd(&s) == 0);
	CHECK("missing: no auditd descriptor", s.auditd_fd == -1);
	CHECK("missing: a warning names the library",
	      strstr(warning, "no records for auditd: auditd support needs "
		     "libaudit.so.1: ") == warning);
	mapped_libaudit(now, sizeof(now));
	CHECK("missing: nothing was mapped", now[0] == '\0');
	integrity_audit_close(&s);
	TEST_EXIT();
}

int main(int argc, char **argv)
{
	struct integrity_sys s;
	char path[512];
	int fd, status;
	pid_t pid;

	if (argc == 3 && !strcmp(argv[1], "--missing"))
		return missing(argv[2]);
	setvbuf(stdout, NULL, _IONBF, 0);
	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
	    mount("tmpfs", "/run", "tmpfs", 0, "size=1m")) {
		printf("FAIL: a private mount namespace with a tmpfs on /run (root): %m\n");
		return 1;
	}
	mapped_libaudit(path, sizeof(path));
	CHECK("libaudit is not loaded at start", path[0] == '\0');

	CHECK("without auditd: the outputs open", open_auditd(&s) == 0);
	mapped_libaudit(path, sizeof(path));
	CHECK("without auditd: libaudit is not loaded", path[0] == '\0');
	integrity_audit_close(&s);

	fd = open("/run/auditd.pid", O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
	CHECK("a fake /run/auditd.pid", fd >= 0);
	if (fd >= 0)
		close(fd);
	CHECK("with auditd: the outputs open", open_auditd(&s) == 0);
	mapped_libaudit(path, sizeof(path));
	CHECK("with auditd: libaudit is loaded", path[0] == '/');
	integrity_audit_close(&s);
	if (path[0] != '/')
		TEST_EXIT();

	/* A new process image, so nothing is loaded yet, in this namespace. */
	pid = fork();
	if (pid == 0) {
		execl("/proc/self/exe", argv[0], "--missing", path, (char *)NULL);
		_exit(127);
	}
	CHECK("the missing case runs and passes",
	      pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	      WEXITSTATUS(status) == 0);
	TEST_EXIT();
}
