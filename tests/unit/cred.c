// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * integrity_cred_from_pid() against processes whose credentials the test
 * sets: distinct real and effective ids, a Groups: line longer than the
 * parser's buffer (CapEff comes after it), a process in a user namespace
 * of its own (its capabilities count for nothing in ours).
 */
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include "integrity.h"
#include "test.h"

#define NGROUPS 3000	/* "Groups:" of about 21 KB */

enum kind { PLAIN_ROOT, MANY_GROUPS_ROOT, IDS, OWN_USERNS };

/* A child that sets up KIND, says so on the pipe, then waits to die. */
static pid_t child(enum kind kind)
{
	int p[2];
	pid_t pid;
	char c = 0;

	if (pipe(p) < 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		static gid_t groups[NGROUPS];

		close(p[0]);
		prctl(PR_SET_NAME, "credtest");
		if (kind == MANY_GROUPS_ROOT || kind == IDS) {
			for (int i = 0; i < NGROUPS; i++)
				groups[i] = (gid_t)(1000000 + i);
			if (setgroups(NGROUPS, groups) < 0)
				_exit(1);
		}
		if (kind == IDS && (setresgid(11, 12, 13) < 0 || setresuid(21, 22, 23) < 0))
			_exit(1);
		if (kind == OWN_USERNS && unshare(CLONE_NEWUSER) < 0)
			_exit(1);
		c = 1;
		if (write(p[1], &c, 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(p[1]);
	if (pid < 0 || read(p[0], &c, 1) != 1 || c != 1) {
		if (pid > 0) {
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
		}
		pid = -1;
	}
	close(p[0]);
	return pid;
}

static void reap(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

int main(void)
{
	struct integrity_cred c, self;
	uint64_t sys_admin = 1ULL << 21;
	pid_t pid;

	if (geteuid() != 0) {
		printf("FAIL: cred: needs root\n");
		return 1;
	}
	integrity_cred_self(&self);
	CHECK("cred: self is root with CAP_SYS_ADMIN",
	      self.uid == 0 && self.euid == 0 && (self.cap_effective & sys_admin));

	pid = child(PLAIN_ROOT);
	CHECK("cred: root child read", pid > 0 && integrity_cred_from_pid(pid, &c) == 0);
	CHECK("cred: root child's ids, caps, name",
	      c.pid == pid && c.uid == 0 && c.euid == 0 && c.gid == self.gid &&
	      c.cap_effective == self.cap_effective && !strcmp(c.comm, "credtest") &&
	      c.auid == self.auid && c.ses == self.ses);
	if (pid > 0)
		reap(pid);

	pid = child(MANY_GROUPS_ROOT);
	CHECK("cred: child in 3000 groups read (CapEff after a long Groups: line)",
	      pid > 0 && integrity_cred_from_pid(pid, &c) == 0);
	CHECK("cred: child in 3000 groups keeps its caps and ids",
	      c.uid == 0 && c.cap_effective == self.cap_effective &&
	      !strcmp(c.comm, "credtest"));
	if (pid > 0)
		reap(pid);

	pid = child(IDS);
	CHECK("cred: setresuid child read", pid > 0 && integrity_cred_from_pid(pid, &c) == 0);
	CHECK("cred: real and effective ids kept apart, no caps",
	      c.uid == 21 && c.euid == 22 && c.gid == 11 && c.egid == 12 &&
	      c.cap_effective == 0);
	if (pid > 0)
		reap(pid);

	pid = child(OWN_USERNS);
	CHECK("cred: child in its own user namespace read",
	      pid > 0 && integrity_cred_from_pid(pid, &c) == 0);
	CHECK("cred: capabilities of another user namespace count for nothing",
	      c.cap_effective == 0);
	if (pid > 0)
		reap(pid);

	CHECK("cred: a process that is gone is an error",
	      integrity_cred_from_pid(pid > 0 ? pid : 999999999, &c) < 0);
	return test_failures ? 1 : 0;
}
