// SPDX-License-Identifier: GPL-2.0-only
/*
 * VM identity against fake proc and run trees built in a temporary
 * directory: command lines, comm and cgroup files as each VMM and manager
 * leaves them (QEMU under libvirt, systemd-machined, Firecracker, kvmtool,
 * Kubernetes pods), then the same files cut, malformed or missing.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "suites.h"
#include "testlib.h"
#include "vm_ident.h"

/* A NULL-terminated list of strings, for command lines. */
#define LIST(...) ((const char *[]){ __VA_ARGS__, NULL })

/* The example UUID, as QEMU's -uuid may give it and as it comes out. */
#define UUID_UPPER "3F2504E0-4F89-11D3-9A0C-0305E82C3301"
#define UUID_LOWER "3f2504e0-4f89-11d3-9a0c-0305e82c3301"
#define UUID_BARE "3f2504e04f8911d39a0c0305e82c3301"

/* Every tree lives under top, which the parent removes even when a forked
 * test fails before cleaning up its own. */
static char top[64];
static char proc[128], run[128];

static void top_create(void)
{
	strcpy(top, "/tmp/kvmstat-ident.XXXXXX");
	if (!mkdtemp(top)) {
		perror("mkdtemp");
		abort();
	}
}

static void top_remove(void)
{
	test_rm_tree(top);
}

/* A fresh proc root and run root for one test. */
static void fake_roots(void)
{
	char dir[96];

	snprintf(dir, sizeof(dir), "%s/t.XXXXXX", top);
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(proc, sizeof(proc), "%s/proc", dir);
	snprintf(run, sizeof(run), "%s/run", dir);
	ck_assert_int_eq(mkdir(proc, 0755), 0);
	ck_assert_int_eq(mkdir(run, 0755), 0);
}

static void vpath(char *path, size_t size, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));
static void vpath(char *path, size_t size, const char *fmt, va_list ap)
{
	int n = vsnprintf(path, size, fmt, ap);

	ck_assert_int_lt(n, (int)size);
}

/* Makes the directory fmt names and those above it up to top. */
static void mkdirs(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void mkdirs(const char *fmt, ...)
{
	char path[512];
	va_list ap;

	va_start(ap, fmt);
	vpath(path, sizeof(path), fmt, ap);
	va_end(ap);
	for (char *p = path + strlen(top) + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		ck_assert(!mkdir(path, 0755) || errno == EEXIST);
		*p = '/';
	}
	ck_assert(!mkdir(path, 0755) || errno == EEXIST);
}

/* The file fmt names, holding len bytes of buf; its directory is made. */
static void write_raw(const char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void write_raw(const char *buf, size_t len, const char *fmt, ...)
{
	char path[512], *slash;
	va_list ap;
	int fd;

	va_start(ap, fmt);
	vpath(path, sizeof(path), fmt, ap);
	va_end(ap);
	slash = strrchr(path, '/');
	*slash = '\0';
	mkdirs("%s", path);
	*slash = '/';
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, buf, len), (ssize_t)len);
	close(fd);
}

#define write_text(text, ...) write_raw(text, strlen(text), __VA_ARGS__)

/* proc/PID with a command line (args NULL: none), comm and cgroup files
 * (NULL: none); the comm and cgroup texts as the kernel ends them. */
static void fake_pid(pid_t pid, const char *const *args, const char *comm,
		     const char *cgroup)
{
	char buf[4096];
	size_t len = 0;

	mkdirs("%s/%d", proc, pid);
	if (args) {
		for (int i = 0; args[i]; i++) {
			size_t l = strlen(args[i]) + 1;

			ck_assert_uint_le(len + l, sizeof(buf));
			memcpy(buf + len, args[i], l);
			len += l;
		}
		write_raw(buf, len, "%s/%d/cmdline", proc, pid);
	}
	if (comm) {
		snprintf(buf, sizeof(buf), "%s\n", comm);
		write_text(buf, "%s/%d/comm", proc, pid);
	}
	if (cgroup)
		write_text(cgroup, "%s/%d/cgroup", proc, pid);
}

/* Reads pid's identity from the fake roots, expecting success. */
static void ident(pid_t pid, struct vm_ident *id)
{
	ck_assert_int_eq(vm_ident_read(proc, run, pid, id), 0);
}

/* Compares a field to want (NULL: unset). */
static void assert_field(const char *what, const char *got, const char *want)
{
	if (!want)
		ck_assert_msg(!got, "%s: \"%s\", want none", what, got);
	else
		ck_assert_msg(got && !strcmp(got, want),
			      "%s: \"%s\", want \"%s\"", what,
			      got ? got : "(none)", want);
}

static void assert_ident(const struct vm_ident *id, enum vm_vmm vmm,
			 const char *name, const char *uuid, const char *unit,
			 const char *pod)
{
	ck_assert_str_eq(vm_vmm_name(id->vmm), vm_vmm_name(vmm));
	assert_field("name", id->name, name);
	assert_field("uuid", id->uuid, uuid);
	assert_field("unit", id->unit, unit);
	assert_field("pod", id->pod, pod);
}

/* A QEMU process pid run with args in cgroup (the file's text) has the
 * name and the unit given (no UUID, no pod). */
static void assert_qemu_cgroup(pid_t pid, const char *const *args,
			       const char *cgroup, const char *name,
			       const char *unit)
{
	struct vm_ident id;

	fake_pid(pid, args, NULL, cgroup);
	ident(pid, &id);
	assert_ident(&id, VM_VMM_QEMU, name, NULL, unit, NULL);
	vm_ident_clear(&id);
}

START_TEST(test_vmm_names)
{
	ck_assert_str_eq(vm_vmm_name(VM_VMM_OTHER), "other");
	ck_assert_str_eq(vm_vmm_name(VM_VMM_QEMU), "qemu");
	ck_assert_str_eq(vm_vmm_name(VM_VMM_FIRECRACKER), "firecracker");
	ck_assert_str_eq(vm_vmm_name(VM_VMM_CLOUD_HYPERVISOR),
			 "cloud-hypervisor");
	ck_assert_str_eq(vm_vmm_name(VM_VMM_CROSVM), "crosvm");
	ck_assert_str_eq(vm_vmm_name(VM_VMM_KVMTOOL), "kvmtool");
	ck_assert_str_eq(vm_vmm_name((enum vm_vmm)99), "other");
	ck_assert_str_eq(vm_vmm_name((enum vm_vmm) - 1), "other");
}
END_TEST

/* argv[0] (with or without a path) says the VMM, else comm (cut to 15
 * bytes as the kernel keeps it). */
START_TEST(test_vmm_detect)
{
	static const struct {
		const char *argv0, *comm;
		enum vm_vmm want;
	} cases[] = {
		{ "/usr/bin/qemu-system-x86_64", "qemu-system-x86",
		  VM_VMM_QEMU },
		{ "qemu-system-aarch64", NULL, VM_VMM_QEMU },
		{ "/usr/libexec/qemu-kvm", NULL, VM_VMM_QEMU },
		{ "/usr/bin/kvm", NULL, VM_VMM_QEMU },
		{ "/usr/local/bin/firecracker", NULL, VM_VMM_FIRECRACKER },
		{ "./cloud-hypervisor", NULL, VM_VMM_CLOUD_HYPERVISOR },
		{ "/opt/bin/crosvm", NULL, VM_VMM_CROSVM },
		{ "lkvm", NULL, VM_VMM_KVMTOOL },
		{ "/usr/bin/lkvm-static", NULL, VM_VMM_KVMTOOL },
		{ "kvmtool", NULL, VM_VMM_KVMTOOL },
		/* comm when argv[0] says nothing */
		{ "/opt/vm/runner", "cloud-hyperviso", VM_VMM_CLOUD_HYPERVISOR },
		{ "", "qemu-system-x86", VM_VMM_QEMU },
		{ "/bin/sh", "firecracker", VM_VMM_FIRECRACKER },
		{ NULL, "crosvm", VM_VMM_CROSVM },
		{ NULL, "lkvm-static", VM_VMM_KVMTOOL },
		/* near misses */
		{ "qemu-system-", "qemu-system-", VM_VMM_OTHER },
		{ "/usr/bin/kvmx", "kvmx", VM_VMM_OTHER },
		{ "kvm-ok", "kvm-ok", VM_VMM_OTHER },
		{ "firecracker-wrapper", "firecracker-wra", VM_VMM_OTHER },
		{ "/usr/bin/qemu-kvm/", "cloud-hyperv", VM_VMM_OTHER },
		{ "bash", "crosvm_vcpu0", VM_VMM_OTHER },
		{ NULL, NULL, VM_VMM_OTHER },
	};

	fake_roots();
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		pid_t pid = 100 + (pid_t)i;
		struct vm_ident id;

		fake_pid(pid,
			 cases[i].argv0 ? LIST(cases[i].argv0, "-m", "1") : NULL,
			 cases[i].comm, NULL);
		ident(pid, &id);
		ck_assert_msg(id.vmm == cases[i].want,
			      "case %zu (%s, %s): %s, want %s", i,
			      cases[i].argv0, cases[i].comm,
			      vm_vmm_name(id.vmm), vm_vmm_name(cases[i].want));
		vm_ident_clear(&id);
	}
}
END_TEST

/* QEMU as libvirt starts it: the domain's name in -name guest=, its UUID,
 * the machine scope with libvirt's emulator cgroup below it. */
START_TEST(test_libvirt_qemu)
{
	struct vm_ident id;

	fake_roots();
	fake_pid(1234,
		 LIST("/usr/bin/qemu-system-x86_64", "-name",
		      "guest=web1,debug-threads=on", "-S", "-uuid", UUID_UPPER,
		      "-m", "1024"),
		 "qemu-system-x86",
		 "0::/machine.slice/machine-qemu\\x2d1\\x2dweb1.scope/libvirt/emulator\n");
	/* machined knows it under libvirt's machine name */
	write_text("NAME=qemu-1-web1\nSCOPE=machine-qemu\\\\x2d1\\\\x2dweb1.scope\n"
		   "ID=" UUID_BARE "\nLEADER=1234\nCLASS=vm\n",
		   "%s/systemd/machines/qemu-1-web1", run);
	ident(1234, &id);
	assert_ident(&id, VM_VMM_QEMU, "web1", UUID_LOWER,
		     "machine-qemu\\x2d1\\x2dweb1.scope", NULL);
	vm_ident_clear(&id);
	assert_ident(&id, VM_VMM_OTHER, NULL, NULL, NULL, NULL);
	vm_ident_clear(&id);

	/* a vCPU's cgroup below the scope, no -name: the scope's name */
	fake_pid(1235, LIST("qemu-system-x86_64", "-m", "64"), NULL,
		 "0::/machine.slice/machine-qemu\\x2d12\\x2dmy\\x2dvm.scope/libvirt/vcpu0\n");
	ident(1235, &id);
	assert_ident(&id, VM_VMM_QEMU, "my-vm", NULL,
		     "machine-qemu\\x2d12\\x2dmy\\x2dvm.scope", NULL);
	vm_ident_clear(&id);

	/* a host without systemd: libvirt's own cgroup of the VM under
	 * /machine, "qemu-N-NAME.libvirt-qemu" (as libvirt 9.0 makes it,
	 * seen on the emulated KVM host); the vCPU's below it */
	assert_qemu_cgroup(1236, LIST("qemu-system-x86_64", "-m", "64"),
			   "0::/machine/qemu-3-db.1.libvirt-qemu/emulator\n",
			   "db.1", "qemu-3-db.1.libvirt-qemu");
	assert_qemu_cgroup(1237,
			   LIST("qemu-system-x86_64", "-name", "guest=w2"),
			   "0::/machine/_qemu-4-w2.libvirt-qemu/vcpu0\n", "w2",
			   "_qemu-4-w2.libvirt-qemu");
	/* another cgroup ending so but no machine name: its unit alone */
	assert_qemu_cgroup(1238, LIST("qemu-system-x86_64"),
			   "0::/machine/x.libvirt-qemu\n", NULL,
			   "x.libvirt-qemu");
}
END_TEST

/* A VM only systemd-machined names: its state file gives the name, the
 * UUID and the unit; other machines and the "unit:" links are not it. */
START_TEST(test_machined_only)
{
	struct vm_ident id;
	char path[512], link[512];

	fake_roots();
	fake_pid(2000, LIST("/usr/bin/qemu-system-x86_64", "-m", "512"), NULL,
		 NULL);
	write_text("# This is private data. Do not parse.\nNAME=other\n"
		   "LEADER=2001\nID=00000000000000000000000000000001\n",
		   "%s/systemd/machines/other", run);
	write_text("# This is private data. Do not parse.\nNAME=vm1\n"
		   "SCOPE=\"machine-vm\\\\x2done.scope\"\nID=" UUID_BARE "\n"
		   "LEADER=2000\nCLASS=vm\nNETIF=\"3 4\"\n",
		   "%s/systemd/machines/vm1", run);
	snprintf(path, sizeof(path), "%s/systemd/machines/unit:x.scope", run);
	ck_assert_int_eq(symlink("vm1", path), 0);
	/* a half-written temporary file beside them */
	write_text("LEADER=2000\nID=" UUID_BARE "\n",
		   "%s/systemd/machines/.#vm1XyZ", run);
	ident(2000, &id);
	assert_ident(&id, VM_VMM_QEMU, "vm1", UUID_LOWER,
		     "machine-vm\\x2done.scope", NULL);
	vm_ident_clear(&id);

	/* the VM's own -uuid and cgroup unit win over machined's */
	fake_pid(2001, LIST("qemu-kvm", "-uuid", UUID_BARE), NULL,
		 "0::/machine.slice/machine-other.scope\n");
	ident(2001, &id);
	assert_ident(&id, VM_VMM_QEMU, "other", UUID_LOWER,
		     "machine-other.scope", NULL);
	vm_ident_clear(&id);

	/* without a run root, nothing of it */
	ck_assert_int_eq(vm_ident_read(proc, NULL, 2000, &id), 0);
	assert_ident(&id, VM_VMM_QEMU, NULL, NULL, NULL, NULL);
	vm_ident_clear(&id);
	/* a run root that is no directory is none */
	snprintf(link, sizeof(link), "%s/systemd/machines/vm1", run);
	ck_assert_int_eq(vm_ident_read(proc, link, 2000, &id), 0);
	assert_ident(&id, VM_VMM_QEMU, NULL, NULL, NULL, NULL);
	vm_ident_clear(&id);
}
END_TEST

/* libvirt's pid files name a VM started without -name; the first that
 * holds the pid, not a longer pid or another file. */
START_TEST(test_libvirt_pidfile_only)
{
	struct vm_ident id;

	fake_roots();
	fake_pid(4321, LIST("/usr/libexec/qemu-kvm", "-S"), NULL, NULL);
	write_text("43210\n", "%s/libvirt/qemu/dom2.pid", run);
	write_text("999\n", "%s/libvirt/qemu/driver.pid", run);
	write_text("4321", "%s/libvirt/qemu/dom1.xml", run);
	write_text("4321\n", "%s/libvirt/qemu/dom1.pid", run);
	mkdirs("%s/libvirt/qemu/dir.pid", run);
	ident(4321, &id);
	assert_ident(&id, VM_VMM_QEMU, "dom1", NULL, NULL, NULL);
	vm_ident_clear(&id);

	/* libvirt's cloud-hypervisor driver */
	fake_pid(4400, LIST("cloud-hypervisor", "--api-socket", "/x"), NULL,
		 NULL);
	write_text(" 4400 \n", "%s/libvirt/ch/chdom.pid", run);
	/* a QEMU pid file does not name a cloud-hypervisor */
	write_text("4400\n", "%s/libvirt/qemu/wrong.pid", run);
	ident(4400, &id);
	assert_ident(&id, VM_VMM_CLOUD_HYPERVISOR, "chdom", NULL, NULL, NULL);
	vm_ident_clear(&id);

	/* -name wins over the pid file */
	fake_pid(4500, LIST("qemu-kvm", "-name", "named"), NULL, NULL);
	write_text("4500\n", "%s/libvirt/qemu/pf.pid", run);
	ident(4500, &id);
	assert_ident(&id, VM_VMM_QEMU, "named", NULL, NULL, NULL);
	vm_ident_clear(&id);
}
END_TEST

START_TEST(test_firecracker)
{
	struct vm_ident id;

	fake_roots();
	fake_pid(700,
		 LIST("/usr/bin/firecracker", "--api-sock", "/run/fc7.sock",
		      "--id", "fc7"),
		 "firecracker", "0::/system.slice/fc7.service\n");
	ident(700, &id);
	assert_ident(&id, VM_VMM_FIRECRACKER, "fc7", NULL, "fc7.service", NULL);
	vm_ident_clear(&id);

	/* under the jailer: --id=, in its chroot, in a jailer's cgroup */
	fake_pid(701,
		 LIST("/firecracker", "--id=fc8", "--start-time-us", "1",
		      "--name", "notthis"),
		 "firecracker", "0::/firecracker/fc8\n");
	ident(701, &id);
	assert_ident(&id, VM_VMM_FIRECRACKER, "fc8", NULL, NULL, NULL);
	vm_ident_clear(&id);

	/* machined's name ranks above the flag */
	fake_pid(702, LIST("firecracker", "--id", "fc9"), NULL,
		 "0::/system.slice/kvm-fc9.service\n");
	write_text("LEADER=702\n", "%s/systemd/machines/fcmachine", run);
	ident(702, &id);
	assert_ident(&id, VM_VMM_FIRECRACKER, "fcmachine", NULL,
		     "kvm-fc9.service", NULL);
	vm_ident_clear(&id);

	/* --id as the last argument, or empty: no name */
	fake_pid(703, LIST("firecracker", "--id"), NULL, NULL);
	ident(703, &id);
	assert_ident(&id, VM_VMM_FIRECRACKER, NULL, NULL, NULL, NULL);
	vm_ident_clear(&id);
	fake_pid(704, LIST("firecracker", "--id="), NULL, NULL);
	ident(704, &id);
	assert_ident(&id, VM_VMM_FIRECRACKER, NULL, NULL, NULL, NULL);
	vm_ident_clear(&id);
}
END_TEST

START_TEST(test_kvmtool)
{
	struct vm_ident id;

	fake_roots();
	fake_pid(800, LIST("lkvm", "run", "-k", "bzImage", "--name", "k1"),
		 NULL, NULL);
	ident(800, &id);
	assert_ident(&id, VM_VMM_KVMTOOL, "k1", NULL, NULL, NULL);
	vm_ident_clear(&id);
	fake_pid(801, LIST("/usr/bin/lkvm-static", "run", "-n", "k2"), NULL,
		 NULL);
	ident(801, &id);
	assert_ident(&id, VM_VMM_KVMTOOL, "k2", NULL, NULL, NULL);
	vm_ident_clear(&id);
	/* a comma is a name's own; -name is no kvmtool option */
	fake_pid(802, LIST("kvmtool", "run", "--name=k3,x", "-name", "no"),
		 NULL, NULL);
	ident(802, &id);
	assert_ident(&id, VM_VMM_KVMTOOL, "k3,x", NULL, NULL, NULL);
	vm_ident_clear(&id);
	/* cloud-hypervisor and crosvm have no name flag */
	fake_pid(803, LIST("crosvm", "run", "--name", "no"), NULL, NULL);
	ident(803, &id);
	assert_ident(&id, VM_VMM_CROSVM, NULL, NULL, NULL, NULL);
	vm_ident_clear(&id);
}
END_TEST

/* Pods under the kubelet's systemd cgroup driver (the UID's dashes as
 * '_') and its cgroupfs driver. */
START_TEST(test_kubernetes_pods)
{
	static const char pod[] = "0a1b2c3d-4e5f-6789-abcd-ef0123456789";
	struct vm_ident id;

	fake_roots();
	fake_pid(900, LIST("/usr/bin/qemu-system-x86_64", "-name", "guest=vm"),
		 NULL,
		 "0::/kubepods.slice/kubepods-burstable.slice/"
		 "kubepods-burstable-pod0a1b2c3d_4e5f_6789_abcd_ef0123456789.slice/"
		 "cri-containerd-0123abcd.scope\n");
	ident(900, &id);
	assert_ident(&id, VM_VMM_QEMU, "vm", NULL,
		     "cri-containerd-0123abcd.scope", pod);
	vm_ident_clear(&id);
	/* a guaranteed pod: no QoS slice; upper case UID */
	fake_pid(901, LIST("qemu-kvm"), NULL,
		 "0::/kubepods.slice/"
		 "kubepods-pod0A1B2C3D_4E5F_6789_ABCD_EF0123456789.slice/"
		 "crio-99.scope/emulator\n");
	ident(901, &id);
	assert_ident(&id, VM_VMM_QEMU, NULL, NULL, "crio-99.scope", pod);
	vm_ident_clear(&id);
	/* cgroupfs driver */
	fake_pid(902, LIST("qemu-kvm"), NULL,
		 "0::/kubepods/besteffort/"
		 "pod0a1b2c3d-4e5f-6789-abcd-ef0123456789/0123abcd\n");
	ident(902, &id);
	assert_ident(&id, VM_VMM_QEMU, NULL, NULL, NULL, pod);
	vm_ident_clear(&id);
	fake_pid(903, LIST("qemu-kvm"), NULL,
		 "0::/kubepods/pod0a1b2c3d-4e5f-6789-abcd-ef0123456789/c\n");
	ident(903, &id);
	assert_ident(&id, VM_VMM_QEMU, NULL, NULL, NULL, pod);
	vm_ident_clear(&id);
	/* not pods: outside kubepods, a bad UID, the QoS slice alone */
	fake_pid(904, LIST("qemu-kvm"), NULL,
		 "0::/pod0a1b2c3d-4e5f-6789-abcd-ef0123456789/c\n");
	fake_pid(905, LIST("qemu-kvm"), NULL,
		 "0::/kubepods.slice/kubepods-burstable.slice/"
		 "kubepods-burstable-pod0a1b2c3d_4e5f_6789_abcd.slice/x.scope\n");
	fake_pid(906, LIST("qemu-kvm"), NULL,
		 "0::/kubepods/burstable/podnothex/c\n");
	fake_pid(907, LIST("qemu-kvm"), NULL,
		 "0::/kubepods-.slice/kubepods-pod.slice/kubepods-x.slice\n");
	for (pid_t pid = 904; pid <= 907; pid++) {
		ident(pid, &id);
		assert_field("pod", id.pod, NULL);
		vm_ident_clear(&id);
	}
}
END_TEST

/* cgroup v1: the name=systemd hierarchy's path; the v2 line first where
 * a hybrid host has both, unless it is the root. */
START_TEST(test_cgroup_v1)
{
	fake_roots();
	/* name=systemd among other controllers */
	assert_qemu_cgroup(1000, LIST("qemu-system-x86_64", "-m", "64"),
			   "12:pids:/user.slice\n"
			   "3:cpu,cpuacct:/\n"
			   "2:rdma,name=systemd,freezer:/system.slice/vm.service/x\n",
			   NULL, "vm.service");
	assert_qemu_cgroup(
		1001, LIST("qemu-system-x86_64"),
		"4:memory:/machine.slice/a.scope\n"
		"3:name=systemd2:/b.scope\n"
		"1:name=systemd:/machine.slice/machine-qemu\\x2d2\\x2dold.scope\n",
		"old", "machine-qemu\\x2d2\\x2dold.scope");
	/* hybrid: the unified line unused */
	assert_qemu_cgroup(1002, LIST("qemu-kvm"),
			   "1:name=systemd:/system.slice/vm.service\n0::/\n",
			   NULL, "vm.service");
	/* hybrid, both used: the unified line */
	assert_qemu_cgroup(1003, LIST("qemu-kvm"),
			   "1:name=systemd:/system.slice/v1.service\n"
			   "0::/system.slice/v2.service\n",
			   NULL, "v2.service");
}
END_TEST

/* Only 32 hex digits, bare or dashed 8-4-4-4-12, are a UUID. */
START_TEST(test_invalid_uuids)
{
	static const char *const bad[] = {
		"",
		"3F2504E0-4F89-11D3-9A0C-0305E82C330",
		"3F2504E0-4F89-11D3-9A0C-0305E82C33011",
		"3F2504E0-4F89-11D3-9A0C-0305E82C330G",
		"3F2504E04-F89-11D3-9A0C-0305E82C3301",
		"3F2504E0_4F89_11D3_9A0C_0305E82C3301",
		"{3F2504E0-4F89-11D3-9A0C-0305E82C3301}",
		"3f2504e04f8911d39a0c0305e82c330",
		"3f2504e04f8911d39a0c0305e82c33011",
		"3f2504e0-4f8911d39a0c0305e82c3301",
		" 3f2504e04f8911d39a0c0305e82c3301",
	};
	struct vm_ident id;

	fake_roots();
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		pid_t pid = 300 + (pid_t)i;

		fake_pid(pid, LIST("qemu-kvm", "-uuid", bad[i]), NULL, NULL);
		ident(pid, &id);
		ck_assert_msg(!id.uuid, "\"%s\" taken as %s", bad[i], id.uuid);
		vm_ident_clear(&id);
	}
	/* bare, --uuid and -uuid= */
	fake_pid(350,
		 LIST("qemu-kvm", "-uuid", "3F2504E04F8911D39A0C0305E82C3301"),
		 NULL, NULL);
	fake_pid(351, LIST("qemu-kvm", "--uuid", UUID_LOWER), NULL, NULL);
	fake_pid(352, LIST("qemu-kvm", "-uuid=" UUID_UPPER), NULL, NULL);
	/* the last one given */
	fake_pid(353, LIST("qemu-kvm", "-uuid", "junk", "-uuid", UUID_UPPER),
		 NULL, NULL);
	for (pid_t pid = 350; pid <= 353; pid++) {
		ident(pid, &id);
		assert_field("uuid", id.uuid, UUID_LOWER);
		vm_ident_clear(&id);
	}
	/* machined's ID must be one too */
	fake_pid(360, LIST("qemu-kvm"), NULL, NULL);
	write_text("LEADER=360\nID=3f2504e04f8911d39a0c0305e82c33\n",
		   "%s/systemd/machines/m", run);
	ident(360, &id);
	assert_ident(&id, VM_VMM_QEMU, "m", NULL, NULL, NULL);
	vm_ident_clear(&id);
}
END_TEST

/* Empty, cut, garbled, huge or missing files give fewer fields, never a
 * crash or a read past a buffer. */
START_TEST(test_malformed_files)
{
	struct vm_ident id;
	char path[512];
	size_t big = 70 * 1024;
	char *buf = malloc(big);

	ck_assert_ptr_nonnull(buf);
	fake_roots();
	/* a process directory with nothing in it */
	mkdirs("%s/10", proc);
	ident(10, &id);
	assert_ident(&id, VM_VMM_OTHER, NULL, NULL, NULL, NULL);
	vm_ident_clear(&id);
	/* empty files */
	write_raw("", 0, "%s/11/cmdline", proc);
	write_raw("", 0, "%s/11/comm", proc);
	write_raw("", 0, "%s/11/cgroup", proc);
	ident(11, &id);
	assert_ident(&id, VM_VMM_OTHER, NULL, NULL, NULL, NULL);
	vm_ident_clear(&id);
	/* a command line without its last NUL, cut mid-option */
	write_raw("qemu-kvm\0-name\0guest=cut", 24, "%s/12/cmdline", proc);
	write_raw("qemu-kvm\0-uuid", 14, "%s/13/cmdline", proc);
	write_raw("firecracker\0--id", 16, "%s/14/cmdline", proc);
	ident(12, &id);
	assert_ident(&id, VM_VMM_QEMU, "cut", NULL, NULL, NULL);
	vm_ident_clear(&id);
	ident(13, &id);
	assert_ident(&id, VM_VMM_QEMU, NULL, NULL, NULL, NULL);
	vm_ident_clear(&id);
	ident(14, &id);
	assert_ident(&id, VM_VMM_FIRECRACKER, NULL, NULL, NULL, NULL);
	vm_ident_clear(&id);
	/* a huge command line and cgroup file: read no further than the
	 * bound, which still leaves comm */
	memset(buf, 'a', big);
	memcpy(buf, "qemu-kvm\0-name\0big\0", 19);
	write_raw(buf, big, "%s/15/cmdline", proc);
	write_raw(buf, big, "%s/15/cgroup", proc);
	write_text("qemu-system-x86\n", "%s/15/comm", proc);
	ident(15, &id);
	assert_ident(&id, VM_VMM_QEMU, NULL, NULL, NULL, NULL);
	vm_ident_clear(&id);
	/* garbled cgroup files, one line each */
	{
		static const char *const cg[] = {
			"garbage",
			":::",
			"0::",
			"0::\n",
			"0::relative/x.scope\n",
			"0:/x.scope",
			"1:name=systemd\n",
			"\n\n\n0::/a.scope/",
			"0::///.scope//.service/\n",
			"0::/machine-qemu\\x2d1\\x2d.scope\n",
			"0::/machine-qemu\\x2d1\\x2dbad\\x00.scope\n",
			"0::/machine-qemu\\x2d1\\x2dab\\x2.scope\n",
			"0::/machine-qemu\\x2dnonum.scope\n",
			"0::/machine-.scope\n",
		};
		static const char *const unit[] = {
			NULL,
			NULL,
			NULL,
			NULL,
			NULL,
			NULL,
			NULL,
			"a.scope",
			NULL,
			"machine-qemu\\x2d1\\x2d.scope",
			"machine-qemu\\x2d1\\x2dbad\\x00.scope",
			"machine-qemu\\x2d1\\x2dab\\x2.scope",
			"machine-qemu\\x2dnonum.scope",
			"machine-.scope",
		};
		static const char *const name[] = {
			[11] = "ab\\x2",
		};

		for (size_t i = 0; i < sizeof(cg) / sizeof(cg[0]); i++) {
			pid_t pid = 20 + (pid_t)i;

			fake_pid(pid, LIST("qemu-kvm"), NULL, cg[i]);
			ident(pid, &id);
			ck_assert_msg(id.vmm == VM_VMM_QEMU, "cgroup %zu", i);
			assert_field("unit", id.unit, unit[i]);
			assert_field("name", id.name,
				     i < sizeof(name) / sizeof(name[0]) ?
					     name[i] :
					     NULL);
			assert_field("pod", id.pod, NULL);
			vm_ident_clear(&id);
		}
	}
	/* garbled pid files and machined state files */
	fake_pid(50, LIST("qemu-kvm"), NULL, NULL);
	write_text("50abc\n", "%s/libvirt/qemu/a.pid", run);
	write_text("-50\n", "%s/libvirt/qemu/b.pid", run);
	write_text("", "%s/libvirt/qemu/c.pid", run);
	write_text("5 0\n", "%s/libvirt/qemu/d.pid", run);
	write_text("99999999999999999999\n", "%s/libvirt/qemu/e.pid", run);
	write_text("50\n", "%s/libvirt/qemu/.pid", run);
	write_text("LEADER=abc\n", "%s/systemd/machines/m1", run);
	write_text("LEADER=\n", "%s/systemd/machines/m2", run);
	write_text("LEADER=5 0\nID=\"" UUID_BARE, "%s/systemd/machines/m3", run);
	write_text("LEADER", "%s/systemd/machines/m4", run);
	write_raw(buf, big, "%s/systemd/machines/m5", run);
	write_raw("LEADER=50\0\nID=", 14, "%s/systemd/machines/unit:m6", run);
	mkdirs("%s/systemd/machines/m7", run);
	snprintf(path, sizeof(path), "%s/systemd/machines/m8", run);
	ck_assert_int_eq(mkfifo(path, 0644), 0);
	ident(50, &id);
	assert_ident(&id, VM_VMM_QEMU, NULL, NULL, NULL, NULL);
	vm_ident_clear(&id);
	/* a quoted value never closed, an unquoted one with blanks */
	write_text("LEADER=\"50\nSCOPE=\"a\\\\x2d.scope\nID= " UUID_BARE,
		   "%s/systemd/machines/m9", run);
	ident(50, &id);
	assert_ident(&id, VM_VMM_QEMU, "m9", NULL, "a\\x2d.scope", NULL);
	vm_ident_clear(&id);
	/* FIFOs for the proc files: refused, never waited on */
	mkdirs("%s/60", proc);
	snprintf(path, sizeof(path), "%s/60/cmdline", proc);
	ck_assert_int_eq(mkfifo(path, 0644), 0);
	snprintf(path, sizeof(path), "%s/60/cgroup", proc);
	ck_assert_int_eq(mkfifo(path, 0644), 0);
	ident(60, &id);
	assert_ident(&id, VM_VMM_OTHER, NULL, NULL, NULL, NULL);
	vm_ident_clear(&id);
	free(buf);
}
END_TEST

/* Random files of the bytes and words these parsers look for: whatever
 * they hold, a read ends (valgrind and ASan runs check it reads nothing
 * past a buffer). */
START_TEST(test_random_files)
{
	/* '\1' stands for a NUL */
	static const char *const words[] = {
		"",
		"\1",
		"\1",
		"\n",
		":",
		"::",
		"/",
		"-",
		"_",
		",",
		",,",
		"=",
		"\"",
		"'",
		"\\",
		"\\x2d",
		"\\x",
		"-name\1",
		"--name\1",
		"-n\1",
		"guest=",
		"--id\1",
		"-uuid\1",
		"--uuid=",
		UUID_BARE,
		UUID_UPPER,
		"web1",
		"kubepods",
		"pod",
		"kubepods-",
		".slice",
		".scope",
		".service",
		"name=systemd",
		"0::/",
		"1:name=systemd:/",
		"machine-qemu\\x2d1\\x2d",
		"/kubepods/pod" UUID_UPPER "/",
		"\nLEADER=1234\n",
		"ID=",
		"SCOPE=",
		"1234",
	};
	const size_t nwords = sizeof(words) / sizeof(words[0]);
	size_t named = 0;
	uint64_t state = 0x9e3779b97f4a7c15ull;
	struct vm_ident id;
	char buf[512];

	fake_roots();
	for (int i = 0; i < 300; i++) {
		static const char *const argv0[] = { "qemu-kvm", "firecracker",
						     "lkvm", "crosvm", "x" };
		static const char *const files[] = { "cmdline", "cgroup" };
		size_t len;

		for (int f = 0; f < 3; f++) {
			len = 0;
			if (f == 0) {
				strcpy(buf, argv0[i % 5]);
				len = strlen(buf) + 1;
			}
			for (int w = test_rand(&state) % 24; w > 0; w--) {
				const char *word =
					words[test_rand(&state) % nwords];
				size_t l = strlen(word);

				if (len + l > sizeof(buf))
					break;
				for (size_t c = 0; c < l; c++)
					buf[len + c] = word[c] == '\1' ?
							       '\0' :
							       word[c];
				len += l;
			}
			if (f < 2)
				write_raw(buf, len, "%s/1234/%s", proc,
					  files[f]);
			else
				write_raw(buf, len, "%s/systemd/machines/m",
					  run);
		}
		ident(1234, &id);
		named += id.name || id.uuid || id.unit || id.pod;
		if (id.uuid)
			ck_assert_uint_eq(strlen(id.uuid), 36);
		if (id.pod)
			ck_assert_uint_eq(strlen(id.pod), 36);
		vm_ident_clear(&id);
	}
	/* the words do make identities now and then */
	ck_assert_uint_gt(named, 10);
}
END_TEST

/* A process that is not (or no longer) there. */
START_TEST(test_vanished)
{
	struct vm_ident id = { .vmm = VM_VMM_QEMU };
	int rc;

	fake_roots();
	rc = vm_ident_read(proc, run, 4242, &id);
	ck_assert_msg(rc == -ENOENT || rc == -ESRCH, "rc %d", rc);
	assert_ident(&id, VM_VMM_OTHER, NULL, NULL, NULL, NULL);
	ck_assert_int_eq(vm_ident_read(proc, run, 0, &id), -EINVAL);
	ck_assert_int_eq(vm_ident_read(proc, run, -1, &id), -EINVAL);
	ck_assert_int_eq(vm_ident_read("/nonexistent/proc", run, 1, &id),
			 -ENOENT);
	/* a pid file may outlive its VM */
	write_text("4242\n", "%s/libvirt/qemu/gone.pid", run);
	rc = vm_ident_read(proc, run, 4242, &id);
	ck_assert_msg(rc == -ENOENT || rc == -ESRCH, "rc %d", rc);
	assert_ident(&id, VM_VMM_OTHER, NULL, NULL, NULL, NULL);
	/* the real /proc: no such pid there either */
	rc = vm_ident_read("/proc", NULL, 0x3fffffff, &id);
	ck_assert_msg(rc == -ENOENT || rc == -ESRCH, "rc %d", rc);
}
END_TEST

/* This process in the real /proc: readable, and no VMM. */
START_TEST(test_real_self)
{
	struct vm_ident id;

	ck_assert_int_eq(vm_ident_read("/proc", "/run", getpid(), &id), 0);
	ck_assert_int_eq(id.vmm, VM_VMM_OTHER);
	ck_assert_ptr_null(id.uuid);
	vm_ident_clear(&id);
}
END_TEST

START_TEST(test_matches)
{
	struct vm_ident id = {
		.vmm = VM_VMM_QEMU,
		.name = strdup("web1"),
		.uuid = strdup(UUID_LOWER),
		.unit = strdup("machine-qemu\\x2d1\\x2dweb1.scope"),
		.pod = strdup("0a1b2c3d-4e5f-6789-abcd-ef0123456789"),
	};
	struct vm_ident none = { 0 };

	ck_assert(vm_ident_matches(&id, "web1"));
	ck_assert(vm_ident_matches(&id, UUID_LOWER));
	ck_assert(vm_ident_matches(&id, UUID_UPPER));
	ck_assert(vm_ident_matches(&id, UUID_BARE));
	ck_assert(vm_ident_matches(&id, "3F2504E04F8911D39A0C0305E82C3301"));
	ck_assert(vm_ident_matches(&id, "machine-qemu\\x2d1\\x2dweb1.scope"));
	/* not a prefix, a longer text, another case of the name, the pod */
	ck_assert(!vm_ident_matches(&id, "web"));
	ck_assert(!vm_ident_matches(&id, "web10"));
	ck_assert(!vm_ident_matches(&id, "WEB1"));
	ck_assert(!vm_ident_matches(&id, "3f2504e0"));
	ck_assert(
		!vm_ident_matches(&id, "3f2504e0-4f89-11d3-9a0c-0305e82c3302"));
	ck_assert(!vm_ident_matches(&id, "3f2504e0-4f89-11d3-9a0c-0305e82c330"));
	ck_assert(!vm_ident_matches(&id, "machine-qemu\\x2d1\\x2dweb1"));
	ck_assert(!vm_ident_matches(&id, "machine-qemu-1-web1.scope"));
	ck_assert(
		!vm_ident_matches(&id, "0a1b2c3d-4e5f-6789-abcd-ef0123456789"));
	ck_assert(!vm_ident_matches(&id, ""));
	ck_assert(!vm_ident_matches(&id, NULL));
	ck_assert(!vm_ident_matches(&none, "web1"));
	ck_assert(!vm_ident_matches(&none, UUID_LOWER));
	ck_assert(!vm_ident_matches(&none, ""));
	vm_ident_clear(&id);
	ck_assert(!vm_ident_matches(&id, "web1"));
	ck_assert_ptr_null(id.name);
}
END_TEST

Suite *vm_ident_suite(void)
{
	Suite *s = suite_create("vm_ident");
	TCase *fake = tcase_create("fake_trees");
	TCase *real = tcase_create("real_proc");

	tcase_add_test(fake, test_vmm_names);
	tcase_add_test(fake, test_vmm_detect);
	tcase_add_test(fake, test_libvirt_qemu);
	tcase_add_test(fake, test_machined_only);
	tcase_add_test(fake, test_libvirt_pidfile_only);
	tcase_add_test(fake, test_firecracker);
	tcase_add_test(fake, test_kvmtool);
	tcase_add_test(fake, test_kubernetes_pods);
	tcase_add_test(fake, test_cgroup_v1);
	tcase_add_test(fake, test_invalid_uuids);
	tcase_add_test(fake, test_malformed_files);
	tcase_add_test(fake, test_random_files);
	tcase_add_test(fake, test_vanished);
	tcase_add_test(fake, test_matches);
	tcase_add_unchecked_fixture(fake, top_create, top_remove);
	suite_add_tcase(s, fake);
	tcase_add_test(real, test_real_self);
	suite_add_tcase(s, real);
	return s;
}
