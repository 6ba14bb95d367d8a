// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Controlling a running uevmd through its socket (see uevmd(8)):
 *
 *   uevm status [--policy]            what uevmd enforces, and its counters
 *   uevm enable [--mode MODE]         initialise EVM (echo 1 > evm), set the mode
 *   uevm policy load FILE             replace the IMA policy (whole or not at all)
 *   uevm measurements daemon [...]    uevmd's measurement list
 *
 * The socket is --socket PATH, else $UEVMD_SOCKET, else /run/uevm/uevmd.sock.
 * A policy file is opened here, as the caller, and passed as a descriptor.
 */
#include <fcntl.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include "prog.h"

enum { OPT_SOCKET = OPT_FIRST_CMD + 200, OPT_MODE, OPT_ALGO, OPT_ASCII, OPT_BINARY,
       OPT_COUNT, OPT_POLICY };

static const char *socket_path(const char *opt)
{
	const char *env = getenv("UEVMD_SOCKET");

	if (opt)
		return opt;
	return env && *env ? env : "/run/uevm/uevmd.sock";
}

/*
 * Send REQ (with FD, when >= 0) and copy the reply's body to OUT.
 * Returns 0 when uevmd said OK, 1 when it refused (its reason printed),
 * EXIT_ERROR when it could not be reached.
 */
static int uevmd_request(const char *sock, const char *req, int fd, FILE *out)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char cbuf[CMSG_SPACE(sizeof(int))], buf[65536];
	struct iovec iov = { (void *)req, strlen(req) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	size_t have = 0;
	bool header = true, ok = false;
	ssize_t n;
	int s;

	if (strlen(sock) >= sizeof(sa.sun_path)) {
		error_msg("%s: socket path too long", sock);
		return EXIT_ERROR;
	}
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock);
	s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0 || connect(s, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		error_msg("cannot reach uevmd at %s: %m (is it running?)", sock);
		if (s >= 0)
			close(s);
		return EXIT_ERROR;
	}
	if (fd >= 0) {
		struct cmsghdr *c;

		memset(cbuf, 0, sizeof(cbuf));
		msg.msg_control = cbuf;
		msg.msg_controllen = sizeof(cbuf);
		c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
	}
	if (sendmsg(s, &msg, MSG_NOSIGNAL) < 0) {
		error_msg("cannot talk to uevmd at %s: %m", sock);
		close(s);
		return EXIT_ERROR;
	}
	shutdown(s, SHUT_WR);
	while ((n = read(s, buf + have, sizeof(buf) - have)) > 0) {
		have += (size_t)n;
		if (header) {
			char *nl = memchr(buf, '\n', have);

			if (!nl && have < sizeof(buf))
				continue;
			if (!nl)
				break;
			*nl = '\0';
			ok = !strcmp(buf, "OK");
			if (!ok) {
				error_msg("uevmd: %s", strncmp(buf, "ERR ", 4) ? buf : buf + 4);
				close(s);
				return 1;
			}
			header = false;
			have -= (size_t)(nl + 1 - buf);
			memmove(buf, nl + 1, have);
		}
		if (!header && have) {
			fwrite(buf, 1, have, out);
			have = 0;
		}
	}
	close(s);
	if (header) {
		error_msg("uevmd at %s closed the connection without an answer", sock);
		return EXIT_ERROR;
	}
	return fflush(out) ? EXIT_ERROR : 0;
}

int cmd_status(const struct command *cmd, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "socket", required_argument, NULL, OPT_SOCKET },
		{ "policy", no_argument, NULL, OPT_POLICY },
		{ "help", no_argument, NULL, OPT_HELP },
		{ NULL, 0, NULL, 0 },
	};
	const char *sock = NULL;
	bool policy = false;
	int c;

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		if (c == OPT_SOCKET) {
			sock = optarg;
		} else if (c == OPT_POLICY) {
			policy = true;
		} else if (c == OPT_HELP) {
			return help_show(cmd->name);
		} else {
			return opt_fail(cmd->name, c, argc, argv, "", longopts);
		}
	}
	if (optind != argc) {
		usage(cmd, stderr);
		return EXIT_USAGE;
	}
	return uevmd_request(socket_path(sock), policy ? "policy-show\n" : "status\n", -1,
			     stdout);
}

int cmd_enable(const struct command *cmd, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "socket", required_argument, NULL, OPT_SOCKET },
		{ "mode", required_argument, NULL, OPT_MODE },
		{ "help", no_argument, NULL, OPT_HELP },
		{ NULL, 0, NULL, 0 },
	};
	const char *sock = NULL, *mode = NULL;
	char req[128];
	int c;

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		if (c == OPT_SOCKET) {
			sock = optarg;
		} else if (c == OPT_MODE) {
			mode = optarg;
		} else if (c == OPT_HELP) {
			return help_show(cmd->name);
		} else {
			return opt_fail(cmd->name, c, argc, argv, "", longopts);
		}
	}
	if (optind != argc || (mode && (strchr(mode, ' ') || strchr(mode, '\n') ||
					strlen(mode) > 32))) {
		usage(cmd, stderr);
		return EXIT_USAGE;
	}
	snprintf(req, sizeof(req), "enable%s%s\n", mode ? " " : "", mode ? mode : "");
	return uevmd_request(socket_path(sock), req, -1, stdout);
}

/* `uevm policy load [--socket PATH] FILE` (argv[0] is "load"). */
int uevmd_policy_load(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "socket", required_argument, NULL, OPT_SOCKET },
		{ "help", no_argument, NULL, OPT_HELP },
		{ NULL, 0, NULL, 0 },
	};
	const char *sock = NULL, *base;
	char req[512];
	int c, fd, ret;

	optind = 1;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		if (c == OPT_HELP)
			return help_show("policy load");
		if (c != OPT_SOCKET)
			return opt_fail("policy load", c, argc, argv, "", longopts);
		sock = optarg;
	}
	if (optind != argc - 1) {
		fprintf(stderr, "Usage: %s policy load [--socket PATH] FILE\n", prog_name);
		return EXIT_USAGE;
	}
	fd = open(argv[optind], O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		file_error(argv[optind], "cannot open", errno);
		return EXIT_ERROR;
	}
	/* The name is only recorded (for `uevm status`): no spaces in it. */
	base = strrchr(argv[optind], '/') ? strrchr(argv[optind], '/') + 1 : argv[optind];
	snprintf(req, sizeof(req), "policy-load %.*s\n", (int)strcspn(base, " \n"), base);
	ret = uevmd_request(socket_path(sock), req, fd, stdout);
	close(fd);
	return ret;
}

/* `uevm measurements daemon [--ascii|--binary|--count] [--algo A]`. */
int uevmd_measurements(const struct command *cmd, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "socket", required_argument, NULL, OPT_SOCKET },
		{ "ascii", no_argument, NULL, OPT_ASCII },
		{ "binary", no_argument, NULL, OPT_BINARY },
		{ "count", no_argument, NULL, OPT_COUNT },
		{ "algo", required_argument, NULL, OPT_ALGO },
		{ "help", no_argument, NULL, OPT_HELP },
		{ NULL, 0, NULL, 0 },
	};
	const char *sock = NULL, *form = "ascii", *algo = NULL;
	char req[128];
	int c;

	(void)cmd;
	optind = 1;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_SOCKET:
			sock = optarg;
			break;
		case OPT_ASCII:
			form = "ascii";
			break;
		case OPT_BINARY:
			form = "binary";
			break;
		case OPT_COUNT:
			form = "count";
			break;
		case OPT_ALGO:
			if (uevm_hash_algo_by_name(optarg) < 0) {
				error_msg("unknown hash algorithm '%s'", optarg);
				return EXIT_USAGE;
			}
			algo = optarg;
			break;
		case OPT_HELP:
			return help_show("measurements daemon");
		default:
			return opt_fail("measurements daemon", c, argc, argv, "",
					longopts);
		}
	}
	if (optind != argc) {
		fprintf(stderr, "Usage: %s measurements daemon [--socket PATH] "
			"[--ascii|--binary|--count] [--algo ALGO]\n", prog_name);
		return EXIT_USAGE;
	}
	snprintf(req, sizeof(req), "measurements %s%s%s\n", form, algo ? " " : "",
		 algo ? algo : "");
	return uevmd_request(socket_path(sock), req, -1, stdout);
}
