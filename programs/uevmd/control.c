// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The control socket (default /run/uevm/uevmd.sock, mode 0600): one request
 * per connection, a line "VERB [ARG]..." (a policy comes as a descriptor
 * passed with SCM_RIGHTS, opened by the client as the invoking user); the
 * reply is "OK" or "ERR why", then the body.  `uevm status`, `uevm enable`,
 * `uevm policy load` and `uevm measurements daemon` speak it.  Changes need
 * a caller that connected as root and still has CAP_SYS_ADMIN, alive
 * (peer_refusal: SO_PEERCRED and SO_PEERPIDFD, then /proc/PID/status).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fanotify.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include "uevmd.h"

#define POLICY_MAX (16u << 20)
#define CAP_SYS_ADMIN_BIT 21

static int listen_fd = -1;
static pthread_t ctl;
static bool started;

static void mode_bits(unsigned int flags, char *out, size_t len)
{
	snprintf(out, len, "%s%s%s",
		 flags & FAN_MARK_IGNORE ? "FAN_MARK_IGNORE" :
		 flags & FAN_MARK_IGNORED_MASK ? "FAN_MARK_IGNORED_MASK" : "off",
		 flags & FAN_MARK_EVICTABLE ? "|FAN_MARK_EVICTABLE" : "", "");
}

int uevmd_status_write(FILE *fp)
{
	struct integrity_cache_stats cs;
	struct uevmd_stats *s = &D->st;
	char ign[64];

	mode_bits(atomic_load(&D->ignore_flags), ign, sizeof(ign));
	integrity_cache_stats(integrity_sys_cache(D->sys), &cs);
	fprintf(fp, "uevmd %s\n", UEVM_VERSION);
	fprintf(fp, "state: %s\n", atomic_load(&D->running) ? "running" : "starting");
	fprintf(fp, "pid: %d\n", (int)D->pid);
	fprintf(fp, "mode: %s\n", integrity_mode_name(integrity_sys_mode(D->sys)));
	fprintf(fp, "evm: %u\n", integrity_sys_evm_read(D->sys));
	fprintf(fp, "key: %s\n", D->key_fpr[0] ? D->key_fpr : "none");
	pthread_mutex_lock(&D->policy_lock);
	if (integrity_sys_policy(D->sys) == D->policy)
		fprintf(fp, "policy: %s (%zu rules)\n", D->policy_source ? D->policy_source : "none",
			D->policy ? ima_policy_count(D->policy) : 0);
	else
		fprintf(fp, "policy: control tree (%zu rules)\n",
			ima_policy_count(integrity_sys_policy(D->sys)));
	pthread_mutex_unlock(&D->policy_lock);
	fprintf(fp, "control_tree: %s\n", tree_mountpoint() ? tree_mountpoint() : "none");
	for (int i = 0; i < D->nmarks; i++)
		fprintf(fp, "watch: %s %s\n", D->marks[i].filesystem ? "filesystem" : "mount",
			D->marks[i].path);
	fprintf(fp, "fanotify_audit: %s\n", D->fan_audit ? "yes" : "no");
	fprintf(fp, "ignore_marks: %s\n", ign);
	fprintf(fp, "label_updates: %s\n", D->notif_fd >= 0 ? "yes" : "no");
	fprintf(fp, "deadline_ms: %u on_timeout: %s\n", D->cfg.deadline_ms,
		perm_late_allow() ? "allow" : "deny");
	{
		int busy, queued;

		perm_load(&busy, &queued);
		fprintf(fp, "workers: %d share: %d busy: %d queued: %d\n", perm_workers(),
			perm_share(), busy, queued);
	}
	fprintf(fp, "events: %llu own: %llu allowed: %llu denied: %llu late: %llu overload: %llu\n",
		(unsigned long long)s->events, (unsigned long long)s->own,
		(unsigned long long)s->allowed, (unsigned long long)s->denied,
		(unsigned long long)s->late, (unsigned long long)s->overload);
	fprintf(fp, "cancelled: %llu share_waits: %llu inode_waits: %llu\n",
		(unsigned long long)s->cancelled, (unsigned long long)s->share_waits,
		(unsigned long long)s->inode_waits);
	fprintf(fp, "relabel_pending: %u relabel_dropped: %llu\n", relabel_pending(),
		(unsigned long long)s->relabel_dropped);
	fprintf(fp, "marks_added: %llu marks_failed: %llu marks_removed: %llu\n",
		(unsigned long long)s->marks_added, (unsigned long long)s->marks_failed,
		(unsigned long long)s->marks_undone);
	fprintf(fp, "notifications: %llu relabelled: %llu refused: %llu created: %llu "
		"overflows: %llu syncs: %llu sync_timeouts: %llu\n",
		(unsigned long long)s->notify_events, (unsigned long long)s->relabelled,
		(unsigned long long)s->relabel_refused, (unsigned long long)s->created,
		(unsigned long long)s->overflows, (unsigned long long)s->syncs,
		(unsigned long long)s->sync_timeouts);
	fprintf(fp, "cache: %zu/%zu entries, %llu hits of %llu lookups, %zu bytes each\n",
		cs.entries, cs.capacity, (unsigned long long)cs.hits,
		(unsigned long long)cs.lookups, cs.entry_size);
	if (D->ml)
		fprintf(fp, "measurements: %zu entries, %lu violations, %s, %s\n",
			ima_ml_count(D->ml), ima_ml_violations(D->ml),
			ima_ml_has_tpm(D->ml) ? "TPM" : "software PCRs",
			D->ml_path ? D->ml_path : "in memory");
	fprintf(fp, "log_dropped: %llu\n", (unsigned long long)s->log_dropped);
	return 0;
}

static int read_fd_all(int fd, char **out, size_t *len)
{
	size_t size = 0, cap = 0;
	char *buf = NULL;

	for (;;) {
		ssize_t n;

		if (size == cap) {
			char *nb;

			if (cap >= POLICY_MAX) {
				free(buf);
				return -EFBIG;
			}
			cap = cap ? 2 * cap : 65536;
			nb = realloc(buf, cap);
			if (!nb) {
				free(buf);
				return -ENOMEM;
			}
			buf = nb;
		}
		n = read(fd, buf + size, cap - size);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int e = errno;

			free(buf);
			return -e;
		}
		if (n == 0)
			break;
		size += (size_t)n;
	}
	*out = buf;
	*len = size;
	return 0;
}

void uevmd_policy_install(struct ima_policy *np, char *src)
{
	struct ima_policy *old;
	char *old_src;

	pthread_mutex_lock(&D->policy_lock);
	old = D->policy;
	old_src = D->policy_source;
	D->policy = np;
	D->policy_source = src;
	integrity_sys_set_policy(D->sys, np);
	pthread_mutex_unlock(&D->policy_lock);
	uevmd_measure_keys();
	/* Workers that started with the old rules finish first; then the
	 * ignore marks placed under them go (the new rules may want more). */
	tree_check_policy();
	/* Threads other than the workers (the watchdog) may still hold the
	 * old rules: they are freed at exit, not now. */
	uevmd_policy_retire(old);
	free(old_src);
}

int uevmd_policy_replace(const char *text, size_t len, const char *source,
			 char *err, size_t errlen)
{
	struct ima_policy *np;
	char *src = strdup(source);
	unsigned int line = 0;
	int ret;

	if (!src)
		return -ENOMEM;
	ret = ima_policy_parse_lines(text, len, &np, &line);
	if (ret) {
		snprintf(err, errlen, "%s", uevm_last_error());
		free(src);
		return ret;
	}
	pthread_mutex_lock(&D->state_lock);
	tree_record_locked();
	pthread_mutex_lock(&D->policy_lock);
	if (uevm_hash_buffer(UEVM_HASH_SHA256, text, len, D->policy_sha256))
		memset(D->policy_sha256, 0xff, sizeof(D->policy_sha256));
	D->policy_from_tree = false;
	pthread_mutex_unlock(&D->policy_lock);
	uevmd_policy_install(np, src);
	ulog(LOG_NOTICE, "policy replaced from %s (%zu rules)", source, ima_policy_count(np));
	uevmd_measure_state();
	pthread_mutex_unlock(&D->state_lock);
	return 0;
}

/* Stream a measurement list rendering into FP. */
static int write_measurements(FILE *fp, const char *form, const char *algo_name)
{
	int algo = UEVM_HASH_SHA1, ret;

	if (!D->ml)
		return -ENOENT;
	if (algo_name && (algo = uevm_hash_algo_by_name(algo_name)) < 0)
		return -EINVAL;
	/* The host list as it is now (waits for an add in progress). */
	ret = ima_ml_refresh(D->ml);
	if (ret)
		return ret;
	if (!strcmp(form, "binary"))
		return ima_ml_write_binary(D->ml, algo, fp);
	if (!strcmp(form, "ascii"))
		return ima_ml_write_ascii(D->ml, algo, fp);
	if (!strcmp(form, "count"))
		return fprintf(fp, "%zu\n", ima_ml_count(D->ml)) < 0 ? -EIO : 0;
	return -EINVAL;
}

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77		/* Linux 6.5 */
#endif

/*
 * Whether the caller may change uevmd: NULL, or why not.  The connecting
 * process must have connected as root (euid 0) and have CAP_SYS_ADMIN, in
 * uevmd's user namespace, when the request is read.  SO_PEERCRED's pid
 * is the connecting process's; it may have exited and handed the
 * connection on, and its pid may since name another process (one with
 * CAP_SYS_ADMIN, if the caller cycled the pid space).  So the pidfd of the
 * connecting process is taken as well, and /proc/PID counts only when that
 * process is still alive after it was read: then the pid was still its own.
 * Kernels before 6.5 have no SO_PEERPIDFD; there the pid alone decides
 * (docs/threat-model.md).
 */
static const char *peer_refusal(int fd, pid_t *pid)
{
	struct ucred uc;
	socklen_t l = sizeof(uc);
	struct integrity_cred cred;
	int pidfd = -1;
	bool capable;

	*pid = 0;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &uc, &l) < 0)
		return "has no credentials";
	*pid = uc.pid;
	/* Fixed at connect(): a process that connected as another user and
	 * then ran a setuid-root program (or handed the connection to one)
	 * shows every capability in /proc/PID/status, as the kernel's netlink
	 * checks the opener of the socket as well as the sender. */
	if (uc.uid != 0)
		return "did not connect as root";
	l = sizeof(pidfd);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERPIDFD, &pidfd, &l) < 0) {
		if (errno != ENOPROTOOPT)
			return "has exited";
		pidfd = -1;
	}
	capable = integrity_cred_from_pid(uc.pid, &cred) == 0 &&
		  integrity_capable(&cred, CAP_SYS_ADMIN_BIT);
	if (pidfd >= 0) {
		/* A pidfd polls readable once its process has exited (no
		 * permission needed, unlike a signal 0). */
		struct pollfd p = { pidfd, POLLIN, 0 };
		bool exited = poll(&p, 1, 0) != 0;

		close(pidfd);
		if (exited)
			return "has exited";
	}
	return capable ? NULL : "lacks CAP_SYS_ADMIN";
}

static void serve(int cfd)
{
	char req[4096], cbuf[CMSG_SPACE(sizeof(int))], err[512] = "";
	struct iovec iov = { req, sizeof(req) - 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
			      .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	struct control_request r;
	char **argv = r.argv;
	int pfd = -1, argc, ret = 0;
	struct cmsghdr *c;
	const char *why;
	ssize_t n;
	pid_t pid;
	FILE *fp;

	n = recvmsg(cfd, &msg, MSG_CMSG_CLOEXEC);
	if (n <= 0)
		return;
	for (c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
			memcpy(&pfd, CMSG_DATA(c), sizeof(int));
	control_request_parse(req, (size_t)n, &r);
	argc = r.argc;
	fp = fdopen(cfd, "w");
	if (!fp) {
		if (pfd >= 0)
			close(pfd);
		return;
	}
	if (r.verb == CTL_EMPTY) {
		ret = -EINVAL;
		snprintf(err, sizeof(err), "empty request");
	} else if (r.verb == CTL_STATUS) {
		fprintf(fp, "OK\n");
		uevmd_status_write(fp);
	} else if (r.verb == CTL_MEASUREMENTS) {
		if (!D->ml) {
			ret = -ENOENT;
			snprintf(err, sizeof(err), "uevmd keeps no measurement list");
		} else {
			fprintf(fp, "OK\n");
			ret = write_measurements(fp, argv[1], argc > 2 ? argv[2] : NULL);
			if (ret)
				goto out;	/* too late for ERR: the client sees a short body */
		}
	} else if (r.verb == CTL_POLICY_SHOW) {
		fprintf(fp, "OK\n");
		pthread_mutex_lock(&D->policy_lock);
		if (D->policy)
			ima_policy_write(D->policy, fp);
		pthread_mutex_unlock(&D->policy_lock);
	} else if (control_verb_privileged(r.verb) && (why = peer_refusal(cfd, &pid))) {
		ret = -EPERM;
		snprintf(err, sizeof(err), "'%s' needs CAP_SYS_ADMIN", argv[0]);
		ulog(LOG_WARNING, "control: '%s' refused: the caller (pid %d) %s",
		     argv[0], (int)pid, why);
	} else if (r.verb == CTL_ENABLE || r.verb == CTL_MODE) {
		enum integrity_mode m;
		struct integrity_cred self;

		if (argc > 1 && integrity_mode_parse(argv[1], &m)) {
			ret = -EINVAL;
			snprintf(err, sizeof(err), "%s", uevm_last_error());
		} else if (r.verb == CTL_MODE && argc < 2) {
			ret = -EINVAL;
			snprintf(err, sizeof(err), "mode needs enforce, log, fix or off");
		} else if (argc > 1 && m == INTEGRITY_MODE_ENFORCE && D->cfg.nmounts) {
			ret = -EINVAL;
			snprintf(err, sizeof(err), "mount = %s: %s", D->cfg.mounts[0],
				 uevmd_mount_mark_caveat);
		} else {
			pthread_mutex_lock(&D->state_lock);
			tree_record_locked();
			integrity_cred_self(&self);
			self.cap_effective = ~0ULL;
			/* "enable": EVM initialised with the HMAC key (echo 1 > evm);
			 * what was appraised without it is appraised again. */
			if (r.verb == CTL_ENABLE &&
			    !(integrity_sys_evm_read(D->sys) & EVM_INIT_HMAC)) {
				ret = integrity_sys_evm_write(D->sys, &self, EVM_INIT_HMAC);
				if (ret) {
					snprintf(err, sizeof(err), "%s", uevm_last_error());
				} else {
					uevmd_quiesce();
					integrity_cache_invalidate_all(integrity_sys_cache(D->sys));
					perm_flush_ignore_marks();
				}
			}
			/* Ignore marks stay: they are only on files that passed. */
			if (!ret && argc > 1)
				integrity_sys_set_mode(D->sys, m);
			if (!ret) {
				ulog(LOG_NOTICE, "%s: evm=%u mode=%s", argv[0],
				     integrity_sys_evm_read(D->sys),
				     integrity_mode_name(integrity_sys_mode(D->sys)));
				fprintf(fp, "OK\nevm: %u\nmode: %s\n", integrity_sys_evm_read(D->sys),
					integrity_mode_name(integrity_sys_mode(D->sys)));
				uevmd_measure_state();
			}
			pthread_mutex_unlock(&D->state_lock);
		}
	} else if (r.verb == CTL_POLICY_LOAD) {
		char *text = NULL;
		size_t len = 0;

		if (pfd < 0) {
			ret = -EINVAL;
			snprintf(err, sizeof(err), "no policy descriptor passed");
		} else if ((ret = read_fd_all(pfd, &text, &len))) {
			snprintf(err, sizeof(err), "cannot read the policy: %s", strerror(-ret));
		} else if ((ret = uevmd_policy_replace(text, len, argc > 1 ? argv[1] : "(control)",
						       err, sizeof(err))) == 0) {
			fprintf(fp, "OK\n%zu rules\n", ima_policy_count(D->policy));
		}
		free(text);
	} else {
		ret = -EINVAL;
		snprintf(err, sizeof(err), "unknown request '%s'", argv[0]);
	}
	if (ret)
		fprintf(fp, "ERR %s\n", err[0] ? err : strerror(-ret));
out:
	log_flush_local();
	if (pfd >= 0)
		close(pfd);
	fclose(fp);
}

static void *control_main(void *arg)
{
	struct pollfd pfd[3] = { { listen_fd, POLLIN, 0 }, { D->stop_efd, POLLIN, 0 },
				 { tree_wake_fd(), POLLIN, 0 } };

	(void)arg;
	own_tid_register();
	for (;;) {
		int cfd;

		int r = poll(pfd, 3, 250);

		if (r < 0 && errno != EINTR)
			break;
		if (pfd[1].revents & POLLIN)
			break;
		tree_check_policy();
		tree_measure_changes();
		if (listen_fd < 0 || !(pfd[0].revents & POLLIN))
			continue;
		cfd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);
		if (cfd < 0)
			continue;
		/* A client that stops reading cannot keep us forever. */
		setsockopt(cfd, SOL_SOCKET, SO_SNDTIMEO, &(struct timeval){ 10, 0 },
			   sizeof(struct timeval));
		setsockopt(cfd, SOL_SOCKET, SO_RCVTIMEO, &(struct timeval){ 10, 0 },
			   sizeof(struct timeval));
		serve(cfd);
	}
	return NULL;
}

/* mkdir -p for the socket's directory (mode 0755, as /run/uevm). */
static void make_parent(const char *path)
{
	char dir[sizeof(((struct sockaddr_un *)0)->sun_path)];
	char *slash;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return;
	*slash = '\0';
	for (char *p = dir + 1; *p; p++)
		if (*p == '/') {
			*p = '\0';
			mkdir(dir, 0755);
			*p = '/';
		}
	mkdir(dir, 0755);
}

int control_start(void)
{
	const char *path = D->cfg.control_socket ? D->cfg.control_socket : UEVMD_DEFAULT_SOCKET;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct stat st;
	int ret;

	if (!strcmp(path, "none")) {
		/* No socket, but a control tree: the thread still looks for
		 * rules and EVM written there (tree_check_policy). */
		if (!tree_mountpoint())
			return 0;
		ret = pthread_create(&ctl, NULL, control_main, NULL);
		started = ret == 0;
		return -ret;
	}
	if (strlen(path) >= sizeof(sa.sun_path)) {
		ulog(LOG_ERR, "%s: control socket path too long", path);
		return -ENAMETOOLONG;
	}
	make_parent(path);
	/* A socket left by a previous run; anything else is not ours. */
	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode)) {
			ulog(LOG_ERR, "%s exists and is not a socket", path);
			return -EEXIST;
		}
		unlink(path);
	}
	listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (listen_fd < 0)
		return -errno;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	if (bind(listen_fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    chmod(path, 0600) < 0 || listen(listen_fd, 16) < 0) {
		ret = -errno;
		ulog(LOG_ERR, "%s: %s", path, strerror(-ret));
		close(listen_fd);
		listen_fd = -1;
		return ret;
	}
	ret = pthread_create(&ctl, NULL, control_main, NULL);
	started = ret == 0;
	return -ret;
}

void control_stop(void)
{
	if (started)
		pthread_join(ctl, NULL);
	started = false;
	if (listen_fd >= 0) {
		close(listen_fd);
		unlink(D->cfg.control_socket ? D->cfg.control_socket : UEVMD_DEFAULT_SOCKET);
	}
	listen_fd = -1;
}
