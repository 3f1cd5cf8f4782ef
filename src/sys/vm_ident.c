// SPDX-License-Identifier: GPL-2.0-only
/*
 * VM identity: which VMM a KVM VM process is and what its manager calls it.
 * Each source is read once per call and trusted for nothing: the command
 * line (bounded, NUL-separated), comm, the cgroup file, libvirt's pid files
 * and systemd-machined's state files may be cut, malformed or gone, and
 * then only give fewer fields. Paths are relative to a proc root and a run
 * root, opened by the caller or once per call.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fs.h"
#include "util.h"
#include "vm.h"
#include "vm_ident.h"

/* The most of a command line, cgroup or state file that is read: a larger
 * one is no VM's and gives nothing. */
#define VM_IDENT_FILE_MAX (64 * 1024)

/* A canonical UUID and its NUL. */
#define VM_UUID_SIZE 37

static const char *const vm_vmm_names[] = {
	[VM_VMM_OTHER] = "other",
	[VM_VMM_QEMU] = "qemu",
	[VM_VMM_FIRECRACKER] = "firecracker",
	[VM_VMM_CLOUD_HYPERVISOR] = "cloud-hypervisor",
	[VM_VMM_CROSVM] = "crosvm",
	[VM_VMM_KVMTOOL] = "kvmtool",
};

const char *vm_vmm_name(enum vm_vmm v)
{
	if ((unsigned int)v >= ARRAY_SIZE(vm_vmm_names))
		return vm_vmm_names[VM_VMM_OTHER];
	return vm_vmm_names[v];
}

/* Program names of VMMs (qemu-system-* aside). */
static const struct {
	const char *prog;
	enum vm_vmm vmm;
} vm_vmm_progs[] = {
	{ "qemu-kvm", VM_VMM_QEMU },
	{ "kvm", VM_VMM_QEMU }, /* Debian's wrapper */
	{ "firecracker", VM_VMM_FIRECRACKER },
	{ "cloud-hypervisor", VM_VMM_CLOUD_HYPERVISOR },
	{ "crosvm", VM_VMM_CROSVM },
	{ "lkvm", VM_VMM_KVMTOOL },
	{ "lkvm-static", VM_VMM_KVMTOOL },
	{ "kvmtool", VM_VMM_KVMTOOL },
};

/* The kernel keeps 15 bytes of a program's name as its comm. */
#define VM_COMM_LEN 15

/*
 * The VMM a program's name (n bytes) says. A comm is the name cut to 15
 * bytes ("cloud-hyperviso"), so it also matches a longer name's start.
 */
static enum vm_vmm vm_vmm_of(const char *prog, size_t n, bool comm)
{
	static const char qemu_system[] = "qemu-system-";
	size_t q = sizeof(qemu_system) - 1;

	if (n > q && !memcmp(prog, qemu_system, q))
		return VM_VMM_QEMU;
	for (size_t i = 0; i < ARRAY_SIZE(vm_vmm_progs); i++) {
		size_t m = strlen(vm_vmm_progs[i].prog);

		if ((n == m || (comm && n == VM_COMM_LEN && m > n)) &&
		    !memcmp(prog, vm_vmm_progs[i].prog, n))
			return vm_vmm_progs[i].vmm;
	}
	return VM_VMM_OTHER;
}

/* The VMM from argv[0]'s base name, else from comm (either may be NULL). */
static enum vm_vmm vm_vmm_detect(const char *argv0, const char *comm)
{
	enum vm_vmm v = VM_VMM_OTHER;

	if (argv0) {
		const char *base = strrchr(argv0, '/');

		base = base ? base + 1 : argv0;
		v = vm_vmm_of(base, strlen(base), false);
	}
	if (v == VM_VMM_OTHER && comm)
		v = vm_vmm_of(comm, strcspn(comm, "\n"), true);
	return v;
}

static int vm_hex(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/*
 * Whether the n bytes at s are a UUID: 32 hex digits, bare or dashed as
 * 8-4-4-4-12 (sep is the dash: '_' in a systemd slice name). Its
 * lower-case dashed form goes into out.
 */
static bool vm_uuid_canon(const char *s, size_t n, char sep,
			  char out[VM_UUID_SIZE])
{
	bool dashed = n == VM_UUID_SIZE - 1;
	size_t o = 0;

	if (!dashed && n != 32)
		return false;
	for (size_t i = 0; i < n; i++) {
		bool at_dash = i == 8 || i == 13 || i == 18 || i == 23;

		if (dashed && at_dash) {
			if (s[i] != sep)
				return false;
			out[o++] = '-';
			continue;
		}
		if (vm_hex(s[i]) < 0)
			return false;
		if (!dashed && (o == 8 || o == 13 || o == 18 || o == 23))
			out[o++] = '-';
		out[o++] = "0123456789abcdef"[vm_hex(s[i])];
	}
	out[o] = '\0';
	return true;
}

/* A new copy of the UUID at s (n bytes) in canonical form, or NULL. */
static char *vm_uuid_dup(const char *s, size_t n, char sep)
{
	char uuid[VM_UUID_SIZE];

	return vm_uuid_canon(s, n, sep, uuid) ? xstrdup(uuid) : NULL;
}

static char *vm_strndup(const char *s, size_t n)
{
	char *d = xmalloc(n + 1);

	memcpy(d, s, n);
	d[n] = '\0';
	return d;
}

/*
 * The value of the last of the options opts (NULL-terminated) in a
 * command line of len bytes (buf[len] NUL), as "OPT VALUE" or
 * "OPT=VALUE": a pointer into buf, or NULL when none is given or the last
 * is empty.
 */
static const char *vm_arg_value(const char *buf, size_t len,
				const char *const *opts)
{
	const char *p = buf, *end = buf + len, *val = NULL;

	/* argv[0] is the program, never an option */
	p += strnlen(p, len) + 1;
	while (p < end) {
		const char *arg = p;

		p += strnlen(p, (size_t)(end - p)) + 1;
		for (size_t i = 0; opts[i]; i++) {
			size_t n = strlen(opts[i]);

			if (strncmp(arg, opts[i], n))
				continue;
			if (arg[n] == '=') {
				val = arg + n + 1;
				break;
			}
			if (!arg[n]) {
				/* as the last argument, it has no value */
				if (p < end) {
					val = p;
					p += strnlen(p, (size_t)(end - p)) + 1;
				}
				break;
			}
		}
	}
	return val && *val ? val : NULL;
}

/* What a command line of len bytes (buf[len] NUL) says; the name a VMM's
 * own flag gives (Firecracker's, kvmtool's) into *flag_name, to rank below
 * libvirt's and machined's. */
static void vm_ident_cmdline(struct vm_ident *id, const char *buf, size_t len,
			     char **flag_name)
{
	static const char *const qemu_uuid[] = { "-uuid", "--uuid", NULL };
	static const char *const fc_id[] = { "--id", NULL };
	static const char *const lkvm_name[] = { "--name", "-n", NULL };
	const char *v;

	switch (id->vmm) {
	case VM_VMM_QEMU:
	case VM_VMM_OTHER:
		/* a VMM not known by name may still take QEMU's options */
		id->name = vm_name_from_cmdline(buf, len);
		v = vm_arg_value(buf, len, qemu_uuid);
		if (v)
			id->uuid = vm_uuid_dup(v, strlen(v), '-');
		break;
	case VM_VMM_FIRECRACKER:
		v = vm_arg_value(buf, len, fc_id);
		*flag_name = v ? xstrdup(v) : NULL;
		break;
	case VM_VMM_KVMTOOL:
		v = vm_arg_value(buf, len, lkvm_name);
		*flag_name = v ? xstrdup(v) : NULL;
		break;
	case VM_VMM_CLOUD_HYPERVISOR:
	case VM_VMM_CROSVM:
		break;
	}
}

/*
 * The path of a cgroup file's unified (v2) line "0::PATH", else of its v1
 * line whose controllers include name=systemd; lines are cut in place.
 * A pointer into buf, or NULL.
 */
static char *vm_cgroup_path(char *buf)
{
	char *v2 = NULL, *v1 = NULL, *line = buf;

	while (line) {
		char *nl = strchr(line, '\n'), *c1, *c2;

		if (nl)
			*nl++ = '\0';
		c1 = strchr(line, ':');
		c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		if (c2 && c2[1] == '/') {
			*c2 = '\0';
			if (c1 - line == 1 && line[0] == '0' && c2 == c1 + 1) {
				v2 = c2 + 1;
			} else {
				/* controllers: comma-separated */
				for (char *c = c1 + 1; c && !v1;
				     c = strchr(c, ',')) {
					c += *c == ',';
					if (!strncmp(c, "name=systemd", 12) &&
					    (c[12] == ',' || !c[12]))
						v1 = c2 + 1;
				}
			}
		}
		line = nl;
	}
	/* a hybrid host may leave the unified tree unused */
	if (v2 && (!v1 || strcmp(v2, "/")))
		return v2;
	return v1;
}

static bool vm_ends_with(const char *s, size_t n, const char *suffix)
{
	size_t m = strlen(suffix);

	return n > m && !memcmp(s + n - m, suffix, m);
}

/*
 * A pod's UID in one cgroup path component (n bytes): the systemd
 * driver's "kubepods[-QOS]-podUID.slice" (the UID's dashes as '_'), or
 * the cgroupfs driver's "podUID" below a kubepods component. NULL when
 * it is neither.
 */
static char *vm_cgroup_pod(const char *s, size_t n, bool in_kubepods)
{
	static const char slice[] = ".slice";
	const char *dash;

	if (n > 9 && !memcmp(s, "kubepods-", 9) && vm_ends_with(s, n, slice)) {
		n -= sizeof(slice) - 1;
		dash = memrchr(s, '-', n);
		if (n - (size_t)(dash + 1 - s) < 3 || memcmp(dash + 1, "pod", 3))
			return NULL;
		dash += 4;
		return vm_uuid_dup(dash, n - (size_t)(dash - s), '_');
	}
	if (in_kubepods && n > 3 && !memcmp(s, "pod", 3))
		return vm_uuid_dup(s + 3, n - 3, '-');
	return NULL;
}

/* The unit and pod of a cgroup path: its deepest .scope or .service
 * component (below it, libvirt's "libvirt/emulator" or a vCPU's cgroup),
 * or on a host without systemd libvirt's own cgroup of the VM
 * ("machine/qemu-1-web1.libvirt-qemu/emulator"), and its outermost
 * kubepods pod. */
static void vm_ident_cgroup(struct vm_ident *id, const char *path)
{
	const char *unit = NULL;
	size_t unit_len = 0;
	bool kube = false;

	while (*path) {
		size_t n;

		path += strspn(path, "/");
		n = strcspn(path, "/");
		if (!n)
			break;
		if (vm_ends_with(path, n, ".scope") ||
		    vm_ends_with(path, n, ".service") ||
		    vm_ends_with(path, n, ".libvirt-qemu") ||
		    vm_ends_with(path, n, ".libvirt-ch")) {
			unit = path;
			unit_len = n;
		}
		if (!id->pod)
			id->pod = vm_cgroup_pod(path, n, kube);
		if (n >= 8 && !memcmp(path, "kubepods", 8))
			kube = true;
		path += n;
	}
	if (unit)
		id->unit = vm_strndup(unit, unit_len);
}

/* NAME of libvirt's machine name "DRIVER-N-NAME" (s, o bytes; DRIVER
 * qemu or ch), or NULL. */
static char *vm_machine_name(const char *s, size_t o)
{
	static const char *const drivers[] = { "qemu-", "ch-" };

	for (size_t i = 0; i < ARRAY_SIZE(drivers); i++) {
		size_t d = strlen(drivers[i]), num;
		const char *p = s + d;

		if (strncmp(s, drivers[i], d))
			continue;
		num = strspn(p, "0123456789");
		p += num + 1;
		/* "N-NAME", with no NUL an escape made in NAME */
		if (num && p[-1] == '-' && *p &&
		    strlen(p) == o - (size_t)(p - s))
			return xstrdup(p);
	}
	return NULL;
}

/*
 * The name in libvirt's machine cgroup: its systemd scope
 * "machine-DRIVER\x2dN\x2dNAME.scope" (systemd's escape of
 * "DRIVER-N-NAME"), or, on a host without systemd, its own
 * "DRIVER-N-NAME.libvirt-DRIVER" under /machine ('_' before a name
 * cgroupfs would take for its own); NULL for any other unit. A name
 * libvirt cut or cleaned stays so.
 */
static char *vm_scope_name(const char *unit)
{
	static const char *const own[] = { ".libvirt-qemu", ".libvirt-ch" };
	size_t n = strlen(unit), end, o = 0;
	char *s, *name;

	for (size_t i = 0; i < ARRAY_SIZE(own); i++) {
		size_t skip = unit[0] == '_';

		if (vm_ends_with(unit, n, own[i]) && n > strlen(own[i]) + skip) {
			end = n - strlen(own[i]) - skip;
			s = vm_strndup(unit + skip, end);
			name = vm_machine_name(s, end);
			free(s);
			return name;
		}
	}
	if (n <= 14 || strncmp(unit, "machine-", 8) ||
	    !vm_ends_with(unit, n, ".scope"))
		return NULL;
	/* unescape "\xNN" between the two, which never grows */
	end = n - 6;
	s = xmalloc(n);
	for (size_t i = 8; i < end; i++) {
		int hi, lo;

		if (i + 3 < end && unit[i] == '\\' && unit[i + 1] == 'x' &&
		    (hi = vm_hex(unit[i + 2])) >= 0 &&
		    (lo = vm_hex(unit[i + 3])) >= 0) {
			s[o++] = (char)(hi << 4 | lo);
			i += 3;
		} else {
			s[o++] = unit[i];
		}
	}
	s[o] = '\0';
	name = vm_machine_name(s, o);
	free(s);
	return name;
}

/* A pid in a small file: digits, maybe blanks around them. */
static bool vm_parse_pid_text(char *s, pid_t *pid)
{
	size_t n;
	long v;

	s += strspn(s, " \t\n");
	n = strspn(s, "0123456789");
	if (!n || s[n + strspn(s + n, " \t\n")])
		return false;
	s[n] = '\0';
	if (util_parse_int(s, 1, INT_MAX, &v))
		return false;
	*pid = (pid_t)v;
	return true;
}

/* The NAME of the libvirt pid file DIR/NAME.pid under runfd that holds
 * pid, or NULL. */
static char *vm_pidfile_name(int runfd, const char *dir, pid_t pid)
{
	const struct fs_entry *e;
	char *name = NULL;
	struct fs_dir d;
	char buf[32];

	if (fs_dir_open(&d, runfd, dir))
		return NULL;
	while (!name && (e = fs_dir_next(&d))) {
		size_t n = strlen(e->name);
		pid_t p;

		if (e->name[0] == '.' || !vm_ends_with(e->name, n, ".pid"))
			continue;
		if (fs_read_at(e->dirfd, e->name, buf, sizeof(buf)) <= 0 ||
		    !vm_parse_pid_text(buf, &p) || p != pid)
			continue;
		name = vm_strndup(e->name, n - 4);
	}
	fs_dir_close(&d);
	return name;
}

/*
 * A value of a systemd state file line, decoded in place as systemd's env
 * files are read: in double quotes, in single quotes (taken as is) or
 * bare; a backslash takes the next byte as is (SCOPE= writes a unit's
 * "\x2d" as "\\x2d").
 */
static char *vm_env_value(char *v)
{
	char quote = 0, *o = v, *s = v;

	if (*s == '"' || *s == '\'')
		quote = *s++;
	for (; *s; s++) {
		if (quote && *s == quote)
			break;
		if (*s == '\\' && quote != '\'' && s[1])
			s++;
		*o++ = *s;
	}
	if (!quote)
		while (o > v && (o[-1] == ' ' || o[-1] == '\t' || o[-1] == '\r'))
			o--;
	*o = '\0';
	return v;
}

/* The keys of one systemd-machined state file that say who a VM is. */
struct vm_machine {
	char *leader, *id, *scope; /* values in the file's buffer, or NULL */
};

static void vm_machine_parse(char *buf, struct vm_machine *m)
{
	char *line = buf;

	*m = (struct vm_machine){ 0 };
	while (line) {
		char *nl = strchr(line, '\n');

		if (nl)
			*nl++ = '\0';
		if (!strncmp(line, "LEADER=", 7))
			m->leader = vm_env_value(line + 7);
		else if (!strncmp(line, "ID=", 3))
			m->id = vm_env_value(line + 3);
		else if (!strncmp(line, "SCOPE=", 6))
			m->scope = vm_env_value(line + 6);
		line = nl;
	}
}

/*
 * systemd-machined's machine whose LEADER is pid: its state file
 * RUN/systemd/machines/NAME gives the name, the ID (32 hex digits) and
 * the SCOPE, each only where id has none yet. The "unit:UNIT" links
 * beside them are skipped.
 */
static void vm_ident_machined(struct vm_ident *id, int runfd, pid_t pid)
{
	const struct fs_entry *e;
	struct fs_dir d;
	bool found = false;

	if (fs_dir_open(&d, runfd, "systemd/machines"))
		return;
	while (!found && (e = fs_dir_next(&d))) {
		struct vm_machine m;
		char *buf;
		pid_t leader;

		if (e->name[0] == '.' || !strncmp(e->name, "unit:", 5))
			continue;
		if (fs_read_all_at(e->dirfd, e->name, VM_IDENT_FILE_MAX, &buf,
				   NULL))
			continue;
		vm_machine_parse(buf, &m);
		found = m.leader && vm_parse_pid_text(m.leader, &leader) &&
			leader == pid;
		if (found) {
			if (!id->name)
				id->name = xstrdup(e->name);
			if (!id->uuid && m.id)
				id->uuid = vm_uuid_dup(m.id, strlen(m.id), '-');
			if (!id->unit && m.scope && *m.scope)
				id->unit = xstrdup(m.scope);
		}
		free(buf);
	}
	fs_dir_close(&d);
}

/* Reads rootfd/PID/NAME whole, up to the bound; 0 or -errno. */
static int vm_ident_file(int rootfd, pid_t pid, const char *name, char **buf,
			 size_t *len)
{
	char path[48];

	snprintf(path, sizeof(path), "%d/%s", (int)pid, name);
	return fs_read_all_at(rootfd, path, VM_IDENT_FILE_MAX, buf, len);
}

int vm_ident_read_at(int rootfd, int runfd, pid_t pid, struct vm_ident *out)
{
	char path[32], comm[64], *cmd, *cg, *flag_name = NULL;
	bool have_comm;
	struct stat st;
	size_t len;
	int rc;

	*out = (struct vm_ident){ 0 };
	if (pid <= 0)
		return -EINVAL;
	snprintf(path, sizeof(path), "%d", (int)pid);
	if (fstatat(rootfd, path, &st, 0))
		return -errno;
	rc = vm_ident_file(rootfd, pid, "cmdline", &cmd, &len);
	/* gone since: the kernel's ESRCH, or the directory left too */
	if (rc == -ESRCH || (rc == -ENOENT && fstatat(rootfd, path, &st, 0)))
		return rc == -ESRCH ? rc : -ENOENT;
	snprintf(path, sizeof(path), "%d/comm", (int)pid);
	have_comm = fs_read_at(rootfd, path, comm, sizeof(comm)) > 0;
	out->vmm = vm_vmm_detect(cmd && len ? cmd : NULL,
				 have_comm ? comm : NULL);
	if (cmd)
		vm_ident_cmdline(out, cmd, len, &flag_name);
	free(cmd);

	if (!vm_ident_file(rootfd, pid, "cgroup", &cg, NULL)) {
		const char *cgpath = vm_cgroup_path(cg);

		if (cgpath)
			vm_ident_cgroup(out, cgpath);
		free(cg);
	}

	/* libvirt's QEMU and cloud-hypervisor drivers keep pid files */
	if (runfd >= 0 && !out->name &&
	    (out->vmm == VM_VMM_QEMU || out->vmm == VM_VMM_OTHER))
		out->name = vm_pidfile_name(runfd, "libvirt/qemu", pid);
	if (runfd >= 0 && !out->name &&
	    (out->vmm == VM_VMM_CLOUD_HYPERVISOR || out->vmm == VM_VMM_OTHER))
		out->name = vm_pidfile_name(runfd, "libvirt/ch", pid);
	if (runfd >= 0 && (!out->name || !out->uuid || !out->unit))
		vm_ident_machined(out, runfd, pid);
	if (!out->name) {
		out->name = flag_name;
		flag_name = NULL;
	}
	free(flag_name);
	if (!out->name && out->unit)
		out->name = vm_scope_name(out->unit);
	return 0;
}

int vm_ident_read(const char *proc_root, const char *run_root, pid_t pid,
		  struct vm_ident *out)
{
	int root, run, rc;

	*out = (struct vm_ident){ 0 };
	root = fs_open_dir(AT_FDCWD, proc_root);
	if (root < 0)
		return root;
	run = run_root ? fs_open_dir(AT_FDCWD, run_root) : -1;
	rc = vm_ident_read_at(root, run, pid, out);
	if (run >= 0)
		close(run);
	close(root);
	return rc;
}

void vm_ident_clear(struct vm_ident *id)
{
	free(id->name);
	free(id->uuid);
	free(id->unit);
	free(id->pod);
	*id = (struct vm_ident){ 0 };
}

bool vm_ident_matches(const struct vm_ident *id, const char *text)
{
	char uuid[VM_UUID_SIZE];

	if (!text || !*text)
		return false;
	if ((id->name && !strcmp(id->name, text)) ||
	    (id->unit && !strcmp(id->unit, text)))
		return true;
	return id->uuid && vm_uuid_canon(text, strlen(text), '-', uuid) &&
	       !strcmp(uuid, id->uuid);
}
