// SPDX-License-Identifier: GPL-2.0-only
/*
 * The test guests' launcher and options, included by guest_common.h after
 * the VM process: the launcher forks the VM processes, forwards signals,
 * reaps them and prints "ready" and "exit"; the options both guests take,
 * the -N/-C runs again with another command line, and main's body.
 */
#ifndef KVMSTAT_GUEST_LAUNCH_H
#define KVMSTAT_GUEST_LAUNCH_H

/* ---- launcher -------------------------------------------------------- */

struct child {
	pid_t pid;
	bool alive;
	bool ready;
};

struct launcher {
	struct child *children;
	unsigned int nr_children; /* forked */
	unsigned int nr_alive;
	unsigned int nr_ready;
	int ready_fd; /* read end; -1 after EOF */
	bool printed_ready;
	bool failed;
	bool aborting; /* a VM failed its setup */
	int term_sig;  /* SIGTERM/SIGINT/SIGHUP received */
};

static void signal_children(struct launcher *l, int sig)
{
	unsigned int i;

	for (i = 0; i < l->nr_children; i++)
		if (l->children[i].alive)
			kill(l->children[i].pid, sig);
}

static struct child *find_child(struct launcher *l, pid_t pid)
{
	unsigned int i;

	for (i = 0; i < l->nr_children; i++)
		if (l->children[i].pid == pid)
			return &l->children[i];
	return NULL;
}

/* Once every VM is set up: "ready", then the start (unless -w). */
static void check_all_ready(struct launcher *l)
{
	if (l->printed_ready || l->nr_ready < opts.vms)
		return;
	emit("ready");
	l->printed_ready = true;
	if (!opts.wait_signal)
		signal_children(l, SIGUSR1);
}

/* Reads the pids the VM processes write once set up. */
static void read_ready(struct launcher *l)
{
	pid_t pids[64];
	ssize_t n, i;

	while (l->ready_fd >= 0) {
		n = read(l->ready_fd, pids, sizeof(pids));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN)
				error_msg("readiness pipe: %s", strerror(errno));
			break;
		}
		if (n == 0) {
			close(l->ready_fd);
			l->ready_fd = -1;
			break;
		}
		/* Each record is one write() of less than PIPE_BUF. */
		for (i = 0; i < n / (ssize_t)sizeof(pid_t); i++) {
			struct child *c = find_child(l, pids[i]);

			if (c && !c->ready) {
				c->ready = true;
				l->nr_ready++;
			}
		}
	}
	check_all_ready(l);
}

/* Reaps the VM processes that exited; one that failed its setup stops
 * the others. */
static void reap_children(struct launcher *l)
{
	struct child *c;
	int status;
	pid_t pid;

	/* A VM may have said it is ready just before it exited. */
	read_ready(l);
	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		c = find_child(l, pid);
		if (!c || !c->alive)
			continue;
		c->alive = false;
		l->nr_alive--;
		if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
			continue;
		l->failed = true;
		if (WIFEXITED(status))
			error_msg("VM process %d exited with status %d", pid,
				  WEXITSTATUS(status));
		else if (WIFSIGNALED(status) && !l->term_sig && !l->aborting)
			error_msg("VM process %d killed by signal %d", pid,
				  WTERMSIG(status));
		if (!c->ready && !l->printed_ready && !l->aborting &&
		    !l->term_sig) {
			error_msg("VM process %d failed during setup, stopping the others",
				  pid);
			l->aborting = true;
			signal_children(l, SIGTERM);
		}
	}
}

/* Until every VM process has exited: readiness, children, and the
 * signals forwarded to them. */
static int launcher_loop(struct launcher *l, int sfd)
{
	struct signalfd_siginfo si;
	struct pollfd pfd[2];
	ssize_t n;

	while (l->nr_alive) {
		pfd[0].fd = sfd;
		pfd[0].events = POLLIN;
		pfd[1].fd = l->ready_fd; /* ignored when -1 */
		pfd[1].events = POLLIN;
		if (poll(pfd, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			error_msg("poll: %s", strerror(errno));
			return -errno;
		}
		if (pfd[1].revents)
			read_ready(l);
		if (!(pfd[0].revents & POLLIN))
			continue;
		n = read(sfd, &si, sizeof(si));
		if (n != sizeof(si))
			continue;
		switch (si.ssi_signo) {
		case SIGCHLD:
			reap_children(l);
			break;
		case SIGUSR1:
			signal_children(l, SIGUSR1);
			break;
		default: /* SIGTERM, SIGINT, SIGHUP */
			if (!l->term_sig)
				l->term_sig = si.ssi_signo;
			signal_children(l, si.ssi_signo);
			break;
		}
	}
	return 0;
}

/* The "-Name" word of a run by exec_named (a VM process makes it
 * "-name"), or NULL. */
static char *name_word;

/* Forks the VM processes and waits for them; returns the exit status. */
static int launch(void)
{
	struct launcher l = { .ready_fd = -1 };
	sigset_t mask, child_mask;
	pid_t parent = getpid();
	int pipefd[2], sfd, status, sig;
	unsigned int i;
	pid_t pid;

	/*
	 * Blocked before the fork: the VMs then keep an early SIGUSR1 pending
	 * until they are set up, and the launcher reads signals from a signalfd.
	 * Default actions, since a shell starts background jobs with SIGINT
	 * ignored: the VMs must die of the SIGINT the launcher forwards, and
	 * an ignored SIGCHLD would reap them behind the launcher's back.
	 */
	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	sigaddset(&mask, SIGUSR1);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	for (sig = 1; sig < NSIG; sig++)
		if (sigismember(&mask, sig) == 1)
			signal(sig, SIG_DFL);
	sigemptyset(&child_mask);
	sigaddset(&child_mask, SIGUSR1);
	if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0) {
		error_msg("sigprocmask: %s", strerror(errno));
		return 1;
	}
	sfd = signalfd(-1, &mask, SFD_CLOEXEC);
	if (sfd < 0) {
		error_msg("signalfd: %s", strerror(errno));
		return 1;
	}
	if (pipe2(pipefd, O_CLOEXEC) < 0) {
		error_msg("pipe: %s", strerror(errno));
		return 1;
	}
	l.children = calloc(opts.vms, sizeof(*l.children));
	if (!l.children) {
		error_msg("out of memory");
		return 1;
	}

	for (i = 0; i < opts.vms; i++) {
		pid = fork();
		if (pid < 0) {
			error_msg("fork: %s", strerror(errno));
			l.failed = true;
			l.aborting = true;
			signal_children(&l, SIGTERM);
			break;
		}
		if (pid == 0) {
			close(sfd);
			close(pipefd[0]);
			free(l.children);
			if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 ||
			    getppid() != parent)
				_exit(1);
			sigprocmask(SIG_SETMASK, &child_mask, NULL);
			/* a VM process says "-name", as a QEMU process does */
			if (name_word)
				name_word[1] = 'n';
			exit(vm_main(pipefd[1]));
		}
		l.children[i].pid = pid;
		l.children[i].alive = true;
		l.nr_children++;
		l.nr_alive++;
	}
	close(pipefd[1]);
	l.ready_fd = pipefd[0];
	if (fcntl(l.ready_fd, F_SETFL, O_NONBLOCK) < 0)
		error_msg("fcntl: %s", strerror(errno));

	if (launcher_loop(&l, sfd) < 0) {
		/* Cannot wait for events: stop and reap the VMs the plain way. */
		l.failed = true;
		signal_children(&l, SIGKILL);
		while (wait(&status) > 0 || errno == EINTR)
			;
	}
	emit("exit");

	if (l.ready_fd >= 0)
		close(l.ready_fd);
	close(sfd);
	free(l.children);
	if (l.term_sig)
		return 128 + l.term_sig;
	return l.failed ? 1 : 0;
}

/* ---- options --------------------------------------------------------- */

/* The help of -N, -C, -T and -h, the options that make the guest look
 * like a VMM (and the last ones usage lists). */
static void usage_vmm_options(FILE *f)
{
	fprintf(f,
		"  -N, --name NAME      run with \"-name guest=NAME\" in the command\n"
		"                       line, where QEMU users have it (for -g)\n"
		"  -C, --cmdline WORDS  run with the command line WORDS (split at\n"
		"                       spaces) and the process name of the first,\n"
		"                       as a VMM's reads (\"firecracker --id fc7\")\n"
		"  -T, --thread-names VMM  name the vCPU threads as VMM does: qemu\n"
		"                       (\"CPU 0/KVM\", the default), firecracker\n"
		"                       (\"fc_vcpu 0\"), cloud-hypervisor (\"vcpu0\"),\n"
		"                       crosvm (\"crosvm_vcpu0\"), kvmtool\n"
		"                       (\"kvm-vcpu-0\"), none (not named), or\n"
		"                       qemu-reversed (QEMU's, but vCPU 0 named\n"
		"                       as the last: names that lie)\n"
		"  -h, --help           show this help\n");
}

static int parse_u64(const char *s, uint64_t max, uint64_t *val)
{
	unsigned long long v;
	char *end;

	while (*s == ' ' || *s == '\t')
		s++;
	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v > max)
		return -ERANGE;
	*val = v;
	return 0;
}

/* A comma-separated list of at most max_n numbers up to max (decimal, or
 * hexadecimal after 0x with hex), into v[*n]. 0, or -EINVAL. argv stays as
 * it is (it is run again: -C, -N). */
static int parse_u64_list(const char *arg, uint64_t max, bool hex,
			  unsigned int max_n, uint64_t *v, unsigned int *n)
{
	char *list = strdup(arg), *s = list, *tok, *end;
	int rc = list ? 0 : -ENOMEM;

	*n = 0;
	while (!rc && s && (tok = strsep(&s, ","))) {
		if (*n == max_n) {
			rc = -EINVAL;
		} else if (hex && !strncasecmp(tok, "0x", 2)) {
			errno = 0;
			v[*n] = strtoull(tok + 2, &end, 16);
			if (errno || end == tok + 2 || *end || v[*n] > max)
				rc = -EINVAL;
			else
				(*n)++;
		} else if (parse_u64(tok, max, &v[*n])) {
			rc = -EINVAL;
		} else {
			(*n)++;
		}
	}
	free(list);
	return rc;
}

/* -T VMM: the vCPU thread names VMM gives (opts.thread_fmt). */
static int parse_thread_names(const char *arg)
{
	static const char *const styles[][2] = {
		{ "qemu", "CPU %u/KVM" },
		{ "firecracker", "fc_vcpu %u" },
		{ "cloud-hypervisor", "vcpu%u" },
		{ "crosvm", "crosvm_vcpu%u" },
		{ "kvmtool", "kvm-vcpu-%u" },
		{ "none", NULL },
		{ "qemu-reversed", "CPU %u/KVM" },
	};
	size_t k = 0;

	while (k < sizeof(styles) / sizeof(styles[0]) &&
	       strcmp(arg, styles[k][0]))
		k++;
	if (k == sizeof(styles) / sizeof(styles[0])) {
		error_msg("unknown thread names '%s' (qemu, firecracker, cloud-hypervisor, crosvm, kvmtool, none or qemu-reversed)",
			  arg);
		return -EINVAL;
	}
	opts.thread_fmt = styles[k][1];
	opts.names_reversed = !strcmp(arg, "qemu-reversed");
	return 0;
}

/* The options into opts: the common ones here, the guest's own through
 * parse_arch_option. 0, or -EINVAL once said what is wrong. */
static int parse_options(int argc, char **argv)
{
	uint64_t v;
	char *end;
	size_t i;
	int c;

	while ((c = getopt_long(argc, argv, short_options, long_options,
				NULL)) != -1) {
		switch (c) {
		case 'm':
			if (parse_u64(optarg, MAX_VMS, &v) || !v) {
				error_msg("invalid number of VMs '%s' (1-%d)",
					  optarg, MAX_VMS);
				return -EINVAL;
			}
			opts.vms = v;
			break;
		case 'v':
			if (parse_u64(optarg, MAX_VCPUS, &v) || !v) {
				error_msg("invalid number of vCPUs '%s' (1-%d)",
					  optarg, MAX_VCPUS);
				return -EINVAL;
			}
			opts.vcpus = v;
			break;
		case 'n': {
			/* all 0 (until the hold time ends) or none */
			bool bad = parse_u64_list(optarg, UINT64_MAX, false,
						  MAX_VCPUS, opts.exits_by,
						  &opts.nexits_by) != 0;

			opts.exits = opts.exits_by[0];
			for (i = 1; !bad && i < opts.nexits_by; i++)
				bad = !opts.exits_by[i] != !opts.exits;
			if (bad) {
				error_msg("invalid number of exits '%s' (N, or "
					  "N,N... by vCPU, all 0 or none)",
					  optarg);
				return -EINVAL;
			}
			break;
		}
		case 'k':
			for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
				if (!strcmp(optarg, kinds[i].name))
					break;
			if (i == sizeof(kinds) / sizeof(kinds[0])) {
				error_msg("invalid exit kind '%s' (%s)", optarg,
					  KIND_NAMES);
				return -EINVAL;
			}
			opts.kind = i;
			break;
		case 't':
			errno = 0;
			opts.hold = strtod(optarg, &end);
			if (errno || end == optarg || *end ||
			    !isfinite(opts.hold) || opts.hold < 0 ||
			    opts.hold > MAX_HOLD) {
				error_msg("invalid hold time '%s' (seconds, 0-%.0f)",
					  optarg, MAX_HOLD);
				return -EINVAL;
			}
			break;
		case 's':
			opts.stats_fds = true;
			break;
		case 'w':
			opts.wait_signal = true;
			break;
		case 'N':
			opts.name = optarg;
			break;
		case 'C':
			opts.cmdline = optarg;
			break;
		case 'T':
			if (parse_thread_names(optarg))
				return -EINVAL;
			break;
		case 'c':
			if (parse_u64(optarg, CPU_SETSIZE - 1, &v)) {
				error_msg("invalid CPU '%s' (0-%d)", optarg,
					  CPU_SETSIZE - 1);
				return -EINVAL;
			}
			opts.cpu = (int)v;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		case '?': /* unknown, or its argument missing */
			usage(stderr);
			return -EINVAL;
		default:
			if (parse_arch_option(c))
				return -EINVAL;
			break;
		}
	}
	if (optind < argc) {
		error_msg("unexpected argument '%s'", argv[optind]);
		return -EINVAL;
	}
	if (check_arch_options())
		return -EINVAL;
	if ((opts.kind == KIND_SPIN || opts.kind == KIND_IDLE) && opts.exits) {
		error_msg("-k %s makes no exits: add -n 0 (run for -t seconds)",
			  kinds[opts.kind].name);
		return -EINVAL;
	}
	return 0;
}

/*
 * -N NAME: runs this program again with "-Name guest=NAME" (a comma
 * doubled, as QEMU escapes it; a NAME that starts with "guest=" is taken
 * as the whole -name value) right after the program name; each VM
 * process makes it "-name", so that its command line reads as a QEMU
 * guest's does. The new run drops those two words before parsing the
 * options. Returns only when exec fails.
 */
static int exec_named(int argc, char **argv)
{
	char **av = calloc((size_t)argc + 3, sizeof(*av));
	size_t len = strlen(opts.name), k;
	char *val = malloc(2 * len + sizeof("guest="));

	if (!av || !val) {
		error_msg("out of memory");
		return 1;
	}
	if (!strncmp(opts.name, "guest=", 6)) {
		/* "guest=NAME,debug-threads=on": a -name value already */
		strcpy(val, opts.name);
	} else {
		k = (size_t)sprintf(val, "guest=");
		for (size_t i = 0; i < len; i++) {
			val[k++] = opts.name[i];
			if (opts.name[i] == ',')
				val[k++] = ',';
		}
		val[k] = '\0';
	}
	av[0] = argv[0];
	/* the launcher's: only the VM processes, in their own copy of the
	 * argument memory, say "-name" (as one QEMU process has it), so
	 * that a lookup by name (kvm_stat's through ps) never finds the
	 * launcher; it once did, between the exec and the fork, and kept
	 * following a process with no VM */
	av[1] = "-Name";
	av[2] = val;
	for (int i = 1; i < argc; i++)
		av[i + 2] = argv[i];
	execv("/proc/self/exe", av);
	error_msg("cannot run again with -name: %s", strerror(errno));
	return 1;
}

/* The word that ends a command line -C gave (exec_cmdline). */
#define CMDLINE_END "--kvmguest"

/*
 * -C WORDS: runs this program again with WORDS (split at spaces) as its
 * command line, then CMDLINE_END and its own options, so that its command
 * line and its VM processes' read as a VMM's; the new run takes its own
 * options from after CMDLINE_END, names itself as the first word and
 * blanks the rest. Returns only when exec fails.
 */
static int exec_cmdline(int argc, char **argv)
{
	char *words = strdup(opts.cmdline);
	char **av = calloc((size_t)argc + strlen(opts.cmdline) + 3, sizeof(*av));
	int n = 0;

	if (!av || !words) {
		error_msg("out of memory");
		return 1;
	}
	for (char *w = strtok(words, " "); w; w = strtok(NULL, " "))
		av[n++] = w;
	if (!n) {
		error_msg("-C: no command line");
		return 2;
	}
	av[n++] = CMDLINE_END;
	/* ours, but -C: "-C WORDS", "--cmdline WORDS", "-CWORDS",
	 * "--cmdline=WORDS" */
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-C") || !strcmp(argv[i], "--cmdline")) {
			i++;
			continue;
		}
		if (!strncmp(argv[i], "-C", 2) ||
		    !strncmp(argv[i], "--cmdline=", 10))
			continue;
		av[n++] = argv[i];
	}
	execv("/proc/self/exe", av);
	error_msg("cannot run again with -C: %s", strerror(errno));
	return 1;
}

/*
 * A guest's main: takes back the command line of a run by exec_cmdline
 * or exec_named, reads the options, runs again for -C or -N, else
 * launches the VMs. Returns the exit status: 2 for a bad command line.
 */
static int guest_main(int argc, char **argv)
{
	char *blank = NULL, *blank_end = NULL;
	bool named = false;

	setvbuf(stdout, NULL, _IOLBF, 0);
	/* (a -C command line may hold "-name" too: CMDLINE_END decides) */
	for (int i = 1; i < argc; i++) {
		const char *base;

		if (strcmp(argv[i], CMDLINE_END))
			continue;
		/* run by exec_cmdline: the words before are a VMM's; ours,
		 * after, are blanked once read (a VMM's options, such as
		 * kvmtool's -n, must not meet ours) */
		base = strrchr(argv[0], '/');
		prctl(PR_SET_NAME, base ? base + 1 : argv[0]);
		blank = argv[i];
		blank_end = argv[argc - 1] + strlen(argv[argc - 1]);
		argv[i] = argv[0];
		argv += i;
		argc -= i;
		break;
	}
	named = !blank && argc > 2 && !strcmp(argv[1], "-Name");
	if (named) {
		/* run by exec_named: "-name guest=NAME" is for others */
		name_word = argv[1];
		argv[2] = argv[0];
		argv += 2;
		argc -= 2;
	}
	if (parse_options(argc, argv))
		return 2;
	if (opts.cmdline && opts.name) {
		error_msg("-C and -N together: give -name in -C's words");
		return 2;
	}
	if (opts.cmdline && !blank)
		return exec_cmdline(argc, argv);
	if (blank)
		memset(blank, 0, (size_t)(blank_end - blank));
	if (opts.name && !named)
		return exec_named(argc, argv);
	return launch();
}

#endif /* KVMSTAT_GUEST_LAUNCH_H */
