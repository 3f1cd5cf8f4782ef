// SPDX-License-Identifier: GPL-2.0-only
/*
 * VM discovery against fake proc trees built in a temporary directory (fd
 * links, command lines, thread names), plus the real /proc: this process is
 * no VM until it creates one through /dev/kvm.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "errmsg.h"
#include "suites.h"
#include "testlib.h"
#include "util.h"
#include "vm.h"

/* A NULL-terminated list of strings, for fd targets and command lines. */
#define LIST(...) ((const char *[]){ __VA_ARGS__, NULL })

/* All fake trees live under top, which the parent process removes even when
 * a forked test fails before cleaning up its own tree. */
static char top[64];
static char root[96];

static void top_create(void)
{
	strcpy(top, "/tmp/kvmstat-vm.XXXXXX");
	if (!mkdtemp(top)) {
		perror("mkdtemp");
		abort();
	}
}

static void fake_root(void)
{
	snprintf(root, sizeof(root), "%s/proc.XXXXXX", top);
	ck_assert_ptr_nonnull(mkdtemp(root));
}

static void fake_root_rm(void)
{
	ck_assert_int_eq(test_rm_tree(root), 0);
}

static void top_remove(void)
{
	test_rm_tree(top);
}

static void mkdirf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void mkdirf(const char *fmt, ...)
{
	char path[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(path, sizeof(path), fmt, ap);
	va_end(ap);
	ck_assert_msg(!mkdir(path, 0755) || errno == EEXIST, "mkdir %s: %s",
		      path, strerror(errno));
}

static void write_file(const char *path, const char *buf, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, buf, len), (ssize_t)len);
	close(fd);
}

/* /PID with fd/N links to each target (first fd number first_fd); no fd
 * directory at all when fds is NULL, as for a process that just exited. */
static void fake_proc_fds(pid_t pid, int first_fd, const char *const *fds)
{
	char path[512];

	mkdirf("%s/%d", root, pid);
	if (!fds)
		return;
	mkdirf("%s/%d/fd", root, pid);
	for (int i = 0; fds[i]; i++) {
		snprintf(path, sizeof(path), "%s/%d/fd/%d", root, pid,
			 first_fd + i);
		ck_assert_int_eq(symlink(fds[i], path), 0);
	}
}

static void fake_proc(pid_t pid, const char *const *fds)
{
	fake_proc_fds(pid, 0, fds);
}

/* /PID/cmdline holding len raw bytes. */
static void fake_cmdline_raw(pid_t pid, const char *buf, size_t len)
{
	char path[512];

	mkdirf("%s/%d", root, pid);
	snprintf(path, sizeof(path), "%s/%d/cmdline", root, pid);
	write_file(path, buf, len);
}

/* /PID/cmdline from args, each NUL-terminated as the kernel shows them. */
static void fake_cmdline(pid_t pid, const char *const *args)
{
	char buf[1024];
	size_t len = 0;

	for (int i = 0; args[i]; i++) {
		size_t l = strlen(args[i]) + 1;

		ck_assert_uint_le(len + l, sizeof(buf));
		memcpy(buf + len, args[i], l);
		len += l;
	}
	fake_cmdline_raw(pid, buf, len);
}

/* /PID/task/TID, with a comm file unless comm is NULL. */
static void fake_thread(pid_t pid, pid_t tid, const char *comm)
{
	char path[512];

	mkdirf("%s/%d", root, pid);
	mkdirf("%s/%d/task", root, pid);
	mkdirf("%s/%d/task/%d", root, pid, tid);
	if (!comm)
		return;
	snprintf(path, sizeof(path), "%s/%d/task/%d/comm", root, pid, tid);
	write_file(path, comm, strlen(comm));
}

static void assert_one_line(const char *err)
{
	ck_assert_msg(*err, "empty error message");
	ck_assert_msg(!strchr(err, '\n'), "message spans lines: %s", err);
}

static void assert_contains(const char *s, const char *part)
{
	ck_assert_msg(strstr(s, part), "\"%s\" lacks \"%s\"", s, part);
}

START_TEST(test_only_vm_fds_count)
{
	struct vm_info *v;
	pid_t *pids;
	size_t n;

	fake_root();
	fake_proc(100, LIST("/dev/null", "anon_inode:kvm-vm-stats",
			    "anon_inode:kvm-vcpu:0", "anon_inode:kvm-vm"));
	fake_proc(200, LIST("anon_inode:kvm-vm-stats"));
	fake_proc(300, LIST("anon_inode:kvm-vcpu:0", "/dev/kvm"));
	fake_proc(50, LIST("anon_inode:kvm-vm"));
	fake_proc(60, LIST("anon_inode:kvm-v", "anon_inode:kvm-vmx",
			   "/anon_inode:kvm-vm"));
	fake_proc(400, NULL);	    /* vanished: no fd directory */
	fake_proc(500, LIST(NULL)); /* kernel thread: no fds */
	mkdirf("%s/self", root);    /* not a pid */
	mkdirf("%s/0x10", root);
	fake_cmdline_raw(700, "", 0); /* no fd directory either */

	ck_assert_int_eq(vm_list(root, &v, &n), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_int_eq(v[0].pid, 50);
	ck_assert_int_eq(v[1].pid, 100);
	ck_assert_ptr_null(v[0].name);
	ck_assert_uint_eq(v[0].nvcpus, 0);
	vm_list_free(v, n);
	/* the same pids alone */
	ck_assert_int_eq(vm_list_pids(root, &pids), 2);
	ck_assert_int_eq(pids[0], 50);
	ck_assert_int_eq(pids[1], 100);
	free(pids);

	ck_assert(vm_pid_is_vm(root, 50));
	ck_assert(vm_pid_is_vm(root, 100));
	ck_assert(!vm_pid_is_vm(root, 200));
	ck_assert(!vm_pid_is_vm(root, 300));
	ck_assert(!vm_pid_is_vm(root, 60));
	ck_assert(!vm_pid_is_vm(root, 400));
	ck_assert(!vm_pid_is_vm(root, 500));
	ck_assert(!vm_pid_is_vm(root, 12345));
	ck_assert(!vm_pid_is_vm(root, 0));
	ck_assert(!vm_pid_is_vm(root, -1));
	fake_root_rm();
}
END_TEST

START_TEST(test_list_empty_and_bad_root)
{
	struct vm_info *v = (void *)1;
	pid_t *pids = (void *)1;
	size_t n = 7;

	fake_root();
	ck_assert_int_eq(vm_list(root, &v, &n), 0);
	ck_assert_uint_eq(n, 0);
	ck_assert_ptr_null(v);
	vm_list_free(v, n);
	ck_assert_int_eq(vm_list_pids(root, &pids), 0);
	ck_assert_ptr_null(pids);
	fake_root_rm();

	ck_assert_int_eq(vm_list_pids("/nonexistent/proc", &pids), -ENOENT);
	ck_assert_ptr_null(pids);
	ck_assert_int_eq(vm_list("/nonexistent/proc", &v, &n), -ENOENT);
	ck_assert_uint_eq(n, 0);
	ck_assert(!vm_pid_is_vm("/nonexistent/proc", 1));
	ck_assert_int_eq(vm_list("/dev/null", &v, &n), -ENOTDIR);
}
END_TEST

/* Every spelling of -name that QEMU accepts, and some it does not. */
static const struct {
	const char *args[8];
	const char *want;
} name_cases[] = {
	{ { "qemu-system-x86_64", "-name", "guest=vm1,debug-threads=on" },
	  "vm1" },
	{ { "qemu", "-name", "vm2" }, "vm2" },
	{ { "qemu", "-name", "vm3,debug-threads=on" }, "vm3" },
	{ { "qemu", "--name", "vm4" }, "vm4" },
	{ { "qemu", "--name", "guest=vm5" }, "vm5" },
	{ { "qemu", "-name", "debug-threads=on,guest=vm6" }, "vm6" },
	{ { "qemu", "-m", "1G", "-name", "process=p,guest=vm7,debug-threads=on",
	    "-smp", "2" },
	  "vm7" },
	/* ",," is a literal comma, in both the bare and the guest= form */
	{ { "qemu", "-name", "a,,b" }, "a,b" },
	{ { "qemu", "-name", "a,,b,,,debug-threads=on" }, "a,b," },
	{ { "qemu", "-name", "guest=x,,y,process=p" }, "x,y" },
	{ { "qemu", "-name", "guest=,,,,lead" }, ",,lead" },
	{ { "qemu", "-name", "guest,,x=z" }, "guest,x=z" },
	/* a later guest wins, across repeated -name options too */
	{ { "qemu", "-name", "first,guest=second" }, "second" },
	{ { "qemu", "-name", "first", "-name", "guest=third" }, "third" },
	{ { "qemu", "-name", "keep", "-name", "debug-threads=on" }, "keep" },
	{ { "qemu", "-name", "spaces in name" }, "spaces in name" },
	/* no name */
	{ { "qemu", "-m", "1G" }, NULL },
	{ { "qemu", "-name" }, NULL },
	{ { "qemu", "-name=vm" }, NULL },
	{ { "qemu", "-name", "guest=" }, NULL },
	{ { "qemu", "-name", "" }, NULL },
	{ { "qemu", "-name", "debug-threads=on" }, NULL },
	{ { "qemu", "-append", "console=ttyS0 -name x" }, NULL },
	{ { "-name", "argv0" }, NULL },
	{ { "kvmguest" }, NULL },
};

static void assert_name(const char *got, const char *want, int i)
{
	if (!want)
		ck_assert_msg(!got, "case %d: want no name, got \"%s\"", i, got);
	else
		ck_assert_msg(got && !strcmp(got, want),
			      "case %d: want \"%s\", got \"%s\"", i, want,
			      got ? got : "(null)");
}

START_TEST(test_guest_names)
{
	static const char unterminated[] = "qemu\0-name\0vm9";
	char *name;

	fake_root();
	for (size_t i = 0; i < ARRAY_SIZE(name_cases); i++)
		fake_cmdline(1000 + (pid_t)i, name_cases[i].args);
	fake_cmdline_raw(2000, unterminated, sizeof(unterminated) - 1);
	fake_cmdline_raw(2001, "", 0); /* kernel thread, zombie */
	mkdirf("%s/2002", root);       /* no cmdline at all */

	for (size_t i = 0; i < ARRAY_SIZE(name_cases); i++) {
		name = vm_guest_name(root, 1000 + (pid_t)i);
		assert_name(name, name_cases[i].want, (int)i);
		free(name);
	}
	name = vm_guest_name(root, 2000);
	assert_name(name, "vm9", 2000);
	free(name);
	ck_assert_ptr_null(vm_guest_name(root, 2001));
	ck_assert_ptr_null(vm_guest_name(root, 2002));
	ck_assert_ptr_null(vm_guest_name(root, 2003));
	ck_assert_ptr_null(vm_guest_name(root, 0));
	fake_root_rm();
}
END_TEST

/* A long command line (libvirt's are several KB) is read whole. */
START_TEST(test_guest_name_long_cmdline)
{
	static char buf[64 * 1024];
	size_t len = 0;
	char *name;
	int i = 0;

	fake_root();
	len += (size_t)sprintf(buf, "qemu") + 1;
	while (len < sizeof(buf) - 100)
		len += (size_t)sprintf(buf + len,
				       i++ % 2 ? "-device" :
						 "virtio-blk,drive=disk") +
		       1;
	len += (size_t)sprintf(buf + len, "-name") + 1;
	len += (size_t)sprintf(buf + len, "guest=tail") + 1;
	fake_cmdline_raw(42, buf, len);
	name = vm_guest_name(root, 42);
	assert_name(name, "tail", 42);
	free(name);
	fake_root_rm();
}
END_TEST

START_TEST(test_vcpus)
{
	struct vm_info v = { .pid = 77 };
	struct vm_info *l;
	size_t n;

	fake_root();
	fake_proc(77, LIST("anon_inode:kvm-vm"));
	fake_cmdline(77, LIST("qemu", "-name", "guest=g,debug-threads=on"));
	fake_thread(77, 77, "qemu-system-x86\n");
	fake_thread(77, 90, "CPU 10/KVM\n");
	fake_thread(77, 81, "CPU 1/KVM\n");
	fake_thread(77, 80, "CPU 0/KVM\n");
	fake_thread(77, 85, "IO mon_iothread\n");
	fake_thread(77, 82, "CPU 2/KVM"); /* no newline */
	fake_thread(77, 83, "CPU x/KVM\n");
	fake_thread(77, 84, "CPU 3/KVMx\n");
	fake_thread(77, 86, "CPU /KVM\n");
	fake_thread(77, 87, "CPU -4/KVM\n");
	fake_thread(77, 88, "CPU 99999999999/KVM\n");
	fake_thread(77, 89, NULL); /* exited: no comm */
	mkdirf("%s/77/task/notatid", root);

	ck_assert_int_eq(vm_load_vcpus(root, &v), 0);
	ck_assert_uint_eq(v.nvcpus, 4);
	ck_assert_int_eq(v.vcpus[0].index, 0);
	ck_assert_int_eq(v.vcpus[0].tid, 80);
	ck_assert_int_eq(v.vcpus[1].index, 1);
	ck_assert_int_eq(v.vcpus[1].tid, 81);
	ck_assert_int_eq(v.vcpus[2].index, 2);
	ck_assert_int_eq(v.vcpus[2].tid, 82);
	ck_assert_int_eq(v.vcpus[3].index, 10);
	ck_assert_int_eq(v.vcpus[3].tid, 90);

	/* the other VMMs' names: Firecracker, cloud-hypervisor, crosvm,
	 * kvmtool; and names near them that are not theirs */
	v.pid = 79;
	fake_thread(79, 79, "firecracker\n");
	fake_thread(79, 91, "fc_vcpu 0\n");
	fake_thread(79, 92, "vcpu1\n");
	fake_thread(79, 93, "crosvm_vcpu2\n");
	fake_thread(79, 94, "kvm-vcpu-3\n");
	fake_thread(79, 95, "fc_vcpu\n");
	fake_thread(79, 96, "vcpu5_worker\n");
	fake_thread(79, 97, "kvm-vcpu-\n");
	fake_thread(79, 98, "fc_vcpu 1x\n");
	fake_thread(79, 99, "vcpu");
	ck_assert_int_eq(vm_load_vcpus(root, &v), 0);
	ck_assert_uint_eq(v.nvcpus, 4);
	for (int i = 0; i < 4; i++) {
		ck_assert_int_eq(v.vcpus[i].index, i);
		ck_assert_int_eq(v.vcpus[i].tid, 91 + i);
	}
	vm_info_clear(&v);
	v.pid = 77;

	/* loading again replaces the array (ASan would see a leak) */
	ck_assert_int_eq(vm_load_vcpus(root, &v), 0);
	ck_assert_uint_eq(v.nvcpus, 4);
	vm_info_clear(&v);
	ck_assert_ptr_null(v.vcpus);
	ck_assert_uint_eq(v.nvcpus, 0);

	/* vm_list fills the same */
	ck_assert_int_eq(vm_list(root, &l, &n), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_str_eq(l[0].name, "g");
	ck_assert_uint_eq(l[0].nvcpus, 4);
	ck_assert_int_eq(l[0].vcpus[3].index, 10);
	vm_list_free(l, n);

	/* no task directory: an error, and no vCPUs left behind */
	v.pid = 78;
	ck_assert_int_eq(vm_load_vcpus(root, &v), -ENOENT);
	ck_assert_uint_eq(v.nvcpus, 0);
	ck_assert_ptr_null(v.vcpus);
	fake_root_rm();
}
END_TEST

/* /PID/task/TID/syscall reading text. */
static void fake_syscall(pid_t pid, pid_t tid, const char *text)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%d/task/%d/syscall", root, pid, tid);
	write_file(path, text, strlen(text));
}

/*
 * Unnamed vCPU threads, as the kernel shows them: a thread in
 * ioctl(FD, KVM_RUN) on an "anon_inode:kvm-vcpu:N" fd runs vCPU N; a
 * thread running guest code ("running"), in another system call, in
 * KVM_RUN on an fd that is not a vCPU's or not readable, a kernel worker
 * of the process, is no vCPU. Names are a hint: the kernel's word wins.
 * KVM's debugfs fills in the vCPUs not seen in KVM_RUN; nheld counts its
 * vCPUs.
 */
START_TEST(test_vcpus_by_kernel)
{
	/* stat lines as the kernel writes them; flags (the ninth field)
	 * PF_USER_WORKER for the worker, none of the workers' for 61 */
	static const char worker_stat[] =
		"67 (kvm-nx-lpage-re) S 2 60 60 0 -1 16384 0 0 0 0 0 5 0 0 20 "
		"0 3 0 900 0 0 18446744073709551615 0 0 0 0 0 0 0 2147483647 "
		"0 0 0 0 -1 1 0 0 0 0 0 0 0 0 0 0 0 0 0\n";
	static const char vcpu_stat[] =
		"61 (my vmm) S) R 1 60 60 0 -1 4194368 10 0 0 0 40 9 0 0 20 0 3 "
		"0 880 100000 50 18446744073709551615 1 1 0 0 0 0 0 4096 0 0 "
		"0 0 -1 0 0 0 0 30 0 0 0 0 0 0 0 0 0\n";
	char syscall[128], dbg[160], path[512];
	struct vm_info v = { .pid = 60 };

	fake_root();
	/* fds 3, 4, 5: the VM, vCPUs 0 and 1; 6 another file */
	fake_proc_fds(60, 3,
		      LIST("anon_inode:kvm-vm", "anon_inode:kvm-vcpu:0",
			   "anon_inode:kvm-vcpu:1", "/dev/null"));
	fake_thread(60, 60, "myvmm\n");
	fake_thread(60, 61, "myvmm\n");
	fake_thread(60, 62, "myvmm\n");
	fake_thread(60, 63, "myvmm\n");
	fake_thread(60, 64, "myvmm\n");
	fake_thread(60, 65, "myvmm\n");
	fake_syscall(60, 60,
		     "7 0x7ffc 0x3 0xffffffff 0x0 0x0 0x0 0x7ffc 0x7f00\n");
	snprintf(syscall, sizeof(syscall),
		 "%d 0x5 0xae80 0x0 0x0 0x0 0x0 0x7ffc 0x7f00\n", SYS_ioctl);
	fake_syscall(60, 61, syscall);	   /* vCPU 1, waiting in the kernel */
	fake_syscall(60, 62, "running\n"); /* vCPU 0 in guest code */
	snprintf(syscall, sizeof(syscall),
		 "%d 0x6 0xae80 0x0 0x0 0x0 0x0 0x1 0x2\n", SYS_ioctl);
	fake_syscall(60, 63, syscall); /* KVM_RUN on /dev/null: no */
	snprintf(syscall, sizeof(syscall),
		 "%d 0x4 0xae81 0x0 0x0 0x0 0x0 0x1 0x2\n", SYS_ioctl);
	fake_syscall(60, 64, syscall); /* another ioctl on vCPU 0's fd */
	snprintf(syscall, sizeof(syscall),
		 "%d 0x9 0xae80 0x0 0x0 0x0 0x0 0x1 0x2\n", SYS_ioctl);
	fake_syscall(60, 65, syscall); /* an fd it does not have */
	/* KVM's NX huge page recovery thread (6.12: a user worker of the
	 * process, PF_USER_WORKER): its registers, copied from vCPU 1's
	 * thread, read as KVM_RUN on vCPU 1's fd; no vCPU. 61's stat says
	 * no worker */
	fake_thread(60, 67, "kvm-nx-lpage-re\n");
	snprintf(syscall, sizeof(syscall),
		 "%d 0x5 0xae80 0x0 0x0 0x0 0x0 0x7ffc 0x7f00\n", SYS_ioctl);
	fake_syscall(60, 67, syscall);
	snprintf(path, sizeof(path), "%s/60/task/67/stat", root);
	write_file(path, worker_stat, strlen(worker_stat));
	snprintf(path, sizeof(path), "%s/60/task/61/stat", root);
	write_file(path, vcpu_stat, strlen(vcpu_stat));

	ck_assert_int_eq(vm_load_vcpus(root, &v), 0);
	ck_assert(!v.named);
	ck_assert_uint_eq(v.nvcpus, 1);
	ck_assert_int_eq(v.vcpus[0].index, 1);
	ck_assert_int_eq(v.vcpus[0].tid, 61);

	/* debugfs knows vCPU 0's thread (62) and has a vCPU 2 not run yet:
	 * 0 from it, 1 from KVM_RUN, three held */
	snprintf(dbg, sizeof(dbg), "%s/dbg", root);
	mkdirf("%s", dbg);
	mkdirf("%s/60-3", dbg);
	for (int i = 0; i < 3; i++) {
		mkdirf("%s/60-3/vcpu%d", dbg, i);
		snprintf(path, sizeof(path), "%s/60-3/vcpu%d/pid", dbg, i);
		write_file(path, i ? "0\n" : "62\n", i ? 2 : 3);
	}
	ck_assert_int_eq(vm_load_vcpu_threads(root, dbg, &v), 0);
	ck_assert(!v.named);
	ck_assert_int_eq(v.nheld, 3);
	ck_assert_uint_eq(v.nvcpus, 2);
	ck_assert_int_eq(v.vcpus[0].index, 0);
	ck_assert_int_eq(v.vcpus[0].tid, 62);
	ck_assert_int_eq(v.vcpus[1].index, 1);
	ck_assert_int_eq(v.vcpus[1].tid, 61);

	/* threads named as a VMM names vCPUs: the names are a hint, the
	 * kernel decides. 61 is named vCPU 0 but waits in KVM_RUN on vCPU
	 * 1's fd; 62 is named vCPU 1 but debugfs has it as vCPU 0's; 66,
	 * named vCPU 3, the kernel shows nothing of: its name stands, said
	 * as a name's */
	fake_thread(60, 61, "vcpu0\n");
	fake_thread(60, 62, "vcpu1\n");
	fake_thread(60, 66, "vcpu3\n");
	ck_assert_int_eq(vm_load_vcpus(root, &v), 0);
	ck_assert(v.named);
	ck_assert_uint_eq(v.nvcpus, 2); /* 62's name gives way to 61 */
	ck_assert_int_eq(v.vcpus[0].index, 1);
	ck_assert_int_eq(v.vcpus[0].tid, 61);
	ck_assert(v.vcpus[0].kernel);
	ck_assert_int_eq(v.vcpus[1].index, 3);
	ck_assert_int_eq(v.vcpus[1].tid, 66);
	ck_assert(!v.vcpus[1].kernel);
	ck_assert_int_eq(vm_load_vcpu_threads(root, dbg, &v), 0);
	ck_assert(v.named);
	ck_assert_int_eq(v.nheld, 3); /* not all seen: debugfs read */
	ck_assert_uint_eq(v.nvcpus, 3);
	ck_assert_int_eq(v.vcpus[0].index, 0);
	ck_assert_int_eq(v.vcpus[0].tid, 62);
	ck_assert(v.vcpus[0].kernel);
	ck_assert_int_eq(v.vcpus[1].index, 1);
	ck_assert_int_eq(v.vcpus[1].tid, 61);
	ck_assert_int_eq(v.vcpus[2].index, 3);
	ck_assert_int_eq(v.vcpus[2].tid, 66);
	ck_assert(!v.vcpus[2].kernel);
	/* debugfs with vCPU 3 on another thread: the name gives way */
	mkdirf("%s/60-3/vcpu3", dbg);
	snprintf(path, sizeof(path), "%s/60-3/vcpu3/pid", dbg);
	write_file(path, "64\n", 3);
	ck_assert_int_eq(vm_load_vcpu_threads(root, dbg, &v), 0);
	ck_assert_uint_eq(v.nvcpus, 3);
	ck_assert_int_eq(v.vcpus[2].index, 3);
	ck_assert_int_eq(v.vcpus[2].tid, 64);
	ck_assert(v.vcpus[2].kernel);
	/* every named thread seen in KVM_RUN: debugfs is not read */
	fake_thread(60, 62, "myvmm\n");
	fake_thread(60, 66, "myvmm\n");
	ck_assert_int_eq(vm_load_vcpu_threads(root, dbg, &v), 0);
	ck_assert(v.named);
	ck_assert_int_eq(v.nheld, -1);
	ck_assert_uint_eq(v.nvcpus, 1);
	ck_assert_int_eq(v.vcpus[0].tid, 61);
	vm_info_clear(&v);
	fake_root_rm();
}
END_TEST

/* The test tree for finding and resolving: see each pid's comment. */
static void fake_guests(void)
{
	fake_root();
	fake_proc(11, LIST("anon_inode:kvm-vm"));
	fake_cmdline(11, LIST("qemu", "-name", "guest=dup"));
	fake_proc(22, LIST("/dev/null", "anon_inode:kvm-vm"));
	fake_cmdline(22, LIST("qemu", "-name", "dup"));
	fake_proc(33, LIST("anon_inode:kvm-vm"));
	fake_cmdline(33, LIST("qemu", "-name", "a,debug-threads=on"));
	fake_proc(44, LIST("anon_inode:kvm-vm"));
	fake_cmdline(44, LIST("qemu", "-name", "b"));
	/* named like a guest but holding only a stats fd: no VM */
	fake_proc(55, LIST("anon_inode:kvm-vm-stats"));
	fake_cmdline(55, LIST("qemu", "-name", "c"));
	/* a VM without a name */
	fake_proc(66, LIST("anon_inode:kvm-vm"));
	fake_cmdline(66, LIST("kvmguest", "-v", "2"));
	/* a name with a newline must not break the one-line messages */
	fake_proc(77, LIST("anon_inode:kvm-vm"));
	fake_cmdline(77, LIST("qemu", "-name", "we\nird"));
	/* named "a" too but vanished: no fd directory */
	fake_proc(88, NULL);
	fake_cmdline(88, LIST("qemu", "-name", "a"));
}

START_TEST(test_find_by_name)
{
	pid_t *pids;

	fake_guests();
	ck_assert_int_eq(vm_find_by_name(root, NULL, "dup", &pids), 2);
	ck_assert_int_eq(pids[0], 11);
	ck_assert_int_eq(pids[1], 22);
	free(pids);
	ck_assert_int_eq(vm_find_by_name(root, NULL, "a", &pids), 1);
	ck_assert_int_eq(pids[0], 33);
	free(pids);
	ck_assert_int_eq(vm_find_by_name(root, NULL, "c", &pids), 0);
	ck_assert_ptr_null(pids);
	ck_assert_int_eq(vm_find_by_name(root, NULL, "du", &pids), 0);
	ck_assert_int_eq(vm_find_by_name(root, NULL, "", &pids), 0);
	ck_assert_int_eq(vm_find_by_name(root, "/nonexistent", "b", &pids), 1);
	ck_assert_int_eq(pids[0], 44);
	free(pids);
	ck_assert_int_eq(vm_find_by_name("/nonexistent", NULL, "a", &pids),
			 -ENOENT);
	ck_assert_ptr_null(pids);
	fake_root_rm();
}
END_TEST

/* root/PID/NAME holding text. */
static void fake_proc_file(pid_t pid, const char *name, const char *text)
{
	char path[512];

	mkdirf("%s/%d", root, pid);
	snprintf(path, sizeof(path), "%s/%d/%s", root, pid, name);
	write_file(path, text, strlen(text));
}

/* -g by what the VM's managers call it: its libvirt or machined name,
 * its UUID, its unit; a process that holds no VM is never found. */
START_TEST(test_find_by_identity)
{
	char run[128], path[512];
	pid_t *pids;

	fake_root();
	snprintf(run, sizeof(run), "%s/run", root);
	mkdirf("%s", run);
	fake_proc(11, LIST("anon_inode:kvm-vm"));
	fake_cmdline(11, LIST("/usr/bin/qemu-system-x86_64", "-name",
			      "guest=web1,debug-threads=on", "-uuid",
			      "3F2504E0-4F89-11D3-9A0C-0305E82C3301"));
	fake_proc_file(11, "cgroup",
		       "0::/machine.slice/machine-qemu\\x2d1\\x2dweb1.scope/libvirt/emulator\n");
	/* a firecracker that machined knows as fcvm */
	fake_proc(22, LIST("anon_inode:kvm-vm"));
	fake_cmdline(22, LIST("firecracker", "--id", "fc7"));
	mkdirf("%s/systemd", run);
	mkdirf("%s/systemd/machines", run);
	snprintf(path, sizeof(path), "%s/systemd/machines/fcvm", run);
	write_file(path, "NAME=fcvm\nLEADER=22\n", 20);
	/* a QEMU only libvirt's pid file names */
	fake_proc(33, LIST("anon_inode:kvm-vm"));
	fake_cmdline(33, LIST("qemu-kvm", "-m", "64"));
	mkdirf("%s/libvirt", run);
	mkdirf("%s/libvirt/qemu", run);
	snprintf(path, sizeof(path), "%s/libvirt/qemu/pf1.pid", run);
	write_file(path, "33", 2);
	/* the same UUID, but no VM */
	fake_proc(44, LIST("anon_inode:kvm-vm-stats"));
	fake_cmdline(44, LIST("qemu-kvm", "-name", "web1", "-uuid",
			      "3f2504e04f8911d39a0c0305e82c3301"));

	ck_assert_int_eq(vm_find_by_name(root, run, "web1", &pids), 1);
	ck_assert_int_eq(pids[0], 11);
	free(pids);
	ck_assert_int_eq(vm_find_by_name(root, run,
					 "3f2504e04f8911d39a0c0305e82c3301",
					 &pids),
			 1);
	ck_assert_int_eq(pids[0], 11);
	free(pids);
	ck_assert_int_eq(vm_find_by_name(root, run,
					 "machine-qemu\\x2d1\\x2dweb1.scope",
					 &pids),
			 1);
	ck_assert_int_eq(pids[0], 11);
	free(pids);
	ck_assert_int_eq(vm_find_by_name(root, run, "fcvm", &pids), 1);
	ck_assert_int_eq(pids[0], 22);
	free(pids);
	ck_assert_int_eq(vm_find_by_name(root, run, "pf1", &pids), 1);
	ck_assert_int_eq(pids[0], 33);
	free(pids);
	/* without the run root, only what /proc says */
	ck_assert_int_eq(vm_find_by_name(root, NULL, "pf1", &pids), 0);
	ck_assert_int_eq(vm_find_by_name(root, NULL, "fc7", &pids), 1);
	ck_assert_int_eq(pids[0], 22);
	free(pids);
	ck_assert_int_eq(vm_find_by_name(root, run, "web", &pids), 0);
	ck_assert_ptr_null(pids);
	fake_root_rm();
}
END_TEST

START_TEST(test_resolve_pid)
{
	struct errmsg err;

	fake_guests();
	strcpy(err.text, "junk");
	ck_assert_int_eq(vm_resolve_pid(root, 33, &err), 0);
	ck_assert_str_eq(err.text, "");

	ck_assert_int_eq(vm_resolve_pid(root, 55, &err), -ENOENT);
	assert_one_line(err.text);
	assert_contains(err.text, "pid 55 is not a KVM VM");
	assert_contains(err.text, "anon_inode:kvm-vm");
	assert_contains(
		err.text,
		"running VMs: 11 (dup), 22 (dup), 33 (a), 44 (b), 66, 77 (we?ird)");

	ck_assert_int_eq(vm_resolve_pid(root, 999, &err), -ESRCH);
	assert_one_line(err.text);
	assert_contains(err.text, "no process with pid 999");
	assert_contains(err.text, "running VMs: 11");

	ck_assert_int_eq(vm_resolve_pid(root, 88, &err), -ESRCH);
	assert_one_line(err.text);

	ck_assert_int_eq(vm_resolve_pid(root, 0, &err), -EINVAL);
	assert_one_line(err.text);
	ck_assert_int_eq(vm_resolve_pid(root, -3, &err), -EINVAL);
	assert_contains(err.text, "-3");

	ck_assert_int_eq(vm_resolve_pid("/nonexistent", 1, &err), -ENOENT);
	assert_one_line(err.text);
	assert_contains(err.text, "/nonexistent");
	fake_root_rm();
}
END_TEST

START_TEST(test_resolve_guest)
{
	struct errmsg err;
	pid_t pid = 0;

	fake_guests();
	ck_assert_int_eq(vm_resolve_guest(root, NULL, "a", &pid, &err), 0);
	ck_assert_int_eq(pid, 33);
	ck_assert_str_eq(err.text, "");
	ck_assert_int_eq(vm_resolve_guest(root, NULL, "we\nird", &pid, &err), 0);
	ck_assert_int_eq(pid, 77);

	ck_assert_int_eq(vm_resolve_guest(root, NULL, "dup", &pid, &err),
			 -ENOTUNIQ);
	assert_one_line(err.text);
	ck_assert_str_eq(
		err.text,
		"guest name \"dup\" matches several VMs (pids 11 22): use -p PID instead");

	ck_assert_int_eq(vm_resolve_guest(root, NULL, "foo", &pid, &err),
			 -ENOENT);
	assert_one_line(err.text);
	ck_assert_str_eq(
		err.text,
		"no guest named \"foo\" (running guests: dup, a, b, we?ird; VMs without a name: pids 66, select them with -p PID)");

	/* a non-VM process with the name does not count */
	ck_assert_int_eq(vm_resolve_guest(root, NULL, "c", &pid, &err), -ENOENT);
	assert_contains(err.text, "no guest named \"c\"");

	ck_assert_int_eq(vm_resolve_guest(root, NULL, "x\ny", &pid, &err),
			 -ENOENT);
	assert_one_line(err.text);

	ck_assert_int_eq(vm_resolve_guest(root, NULL, "", &pid, &err), -EINVAL);
	assert_one_line(err.text);
	fake_root_rm();

	/* nothing running at all */
	fake_root();
	ck_assert_int_eq(vm_resolve_guest(root, NULL, "foo", &pid, &err),
			 -ENOENT);
	ck_assert_str_eq(err.text,
			 "no guest named \"foo\" (no KVM VMs are running)");
	ck_assert_int_eq(vm_resolve_pid(root, 5, &err), -ESRCH);
	ck_assert_str_eq(err.text,
			 "no process with pid 5; no KVM VMs are running");
	fake_root_rm();
}
END_TEST

/* A message cut to the line's size ends in "..."; a caller that wants no
 * line passes NULL and still gets the error. */
START_TEST(test_resolve_cut_message)
{
	char name[ERRMSG_MAX + 100];
	struct errmsg cut;
	pid_t pid;

	fake_guests();
	memset(name, 'n', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	memset(cut.text, 'x', sizeof(cut.text));
	ck_assert_int_eq(vm_resolve_guest(root, NULL, name, &pid, &cut),
			 -ENOENT);
	ck_assert_uint_eq(strlen(cut.text), ERRMSG_MAX - 1);
	ck_assert_str_eq(cut.text + ERRMSG_MAX - 4, "...");
	ck_assert_int_eq(strncmp(cut.text, "no guest named \"nnnn", 20), 0);
	ck_assert_int_eq(vm_resolve_pid(root, 55, NULL), -ENOENT);
	ck_assert_int_eq(vm_resolve_guest(root, NULL, "foo", &pid, NULL),
			 -ENOENT);
	fake_root_rm();
}
END_TEST

/* What a classified link gives. */
static enum vm_fd_kind kind_of(const char *link, int *vcpu)
{
	*vcpu = -7;
	return vm_fd_kind(link, strlen(link), vcpu);
}

/* Only exact KVM links count; a stats link says whose it is. */
START_TEST(test_fd_kind)
{
	static const char *const other[] = {
		"anon_inode:kvm-vcpu:",
		"anon_inode:kvm-vcpu:0x",
		"anon_inode:kvm-vcpu:-1",
		"anon_inode:kvm-vm-",
		"anon_inode:kvm",
		"anon_inode:kvm-vcpu-stats:",
		"anon_inode:kvm-vcpu-stats:1x",
		"anon_inode:kvm-vcpu-stats:-1",
		"anon_inode:kvm-vm-statsx",
		"anon_inode:kvm-vcpu-stats:99999999999",
		"/dev/kvm",
		"",
		"anon_inode:[eventfd]",
	};
	int vcpu;

	ck_assert_int_eq(kind_of("anon_inode:kvm-vm", &vcpu), VM_FD_VM);
	ck_assert_int_eq(kind_of("anon_inode:kvm-vm-stats", &vcpu), VM_FD_STATS);
	ck_assert_int_eq(vcpu, -1);
	ck_assert_int_eq(kind_of("anon_inode:kvm-vcpu-stats:0", &vcpu),
			 VM_FD_STATS);
	ck_assert_int_eq(vcpu, 0);
	ck_assert_int_eq(kind_of("anon_inode:kvm-vcpu-stats:2147483647", &vcpu),
			 VM_FD_STATS);
	ck_assert_int_eq(vcpu, 2147483647);
	/* a vCPU's own fd: the vCPU exists */
	ck_assert_int_eq(kind_of("anon_inode:kvm-vcpu:0", &vcpu), VM_FD_VCPU);
	ck_assert_int_eq(vcpu, 0);
	ck_assert_int_eq(kind_of("anon_inode:kvm-vcpu:12", &vcpu), VM_FD_VCPU);
	ck_assert_int_eq(vcpu, 12);
	for (size_t i = 0; i < sizeof(other) / sizeof(other[0]); i++)
		ck_assert_msg(kind_of(other[i], &vcpu) == VM_FD_OTHER, "%s",
			      other[i]);
	/* n bytes, not the string: a prefix of a VM link is no VM link */
	ck_assert_int_eq(vm_fd_kind("anon_inode:kvm-vm-stats", 17, &vcpu),
			 VM_FD_VM);
}
END_TEST

/* What a walk over fd links saw. */
struct fd_seen {
	int fd[8], kind[8], vcpu[8];
	int n;
	int stop_at; /* ends the walk with 5 after this many */
};

static int fd_note(int fd, enum vm_fd_kind kind, int vcpu, void *ctx)
{
	struct fd_seen *s = ctx;

	ck_assert_int_lt(s->n, 8);
	s->fd[s->n] = fd;
	s->kind[s->n] = kind;
	s->vcpu[s->n] = vcpu;
	s->n++;
	return s->n == s->stop_at ? 5 : 0;
}

/* The process list comes sorted from any tree; the fd walk reports the
 * KVM fds only, with their numbers, and stops when told. */
START_TEST(test_proc_scan)
{
	static const pid_t made[] = { 300, 7, 4000, 12, 1 };
	/* fields 4 to 21 are 4 to 21, then the start time */
	static const char stat[] = "20 (a) b (c) S 4 5 6 7 8 9 10 11 12 13 "
				   "14 15 16 17 18 19 20 21 987654 23 24\n";
	struct fd_seen s = { 0 };
	char path[512];
	pid_t *pids;
	int rootfd, n;

	fake_root();
	for (size_t i = 0; i < sizeof(made) / sizeof(made[0]); i++)
		fake_proc(made[i], LIST("/dev/null"));
	mkdirf("%s/self", root);
	mkdirf("%s/0", root);
	mkdirf("%s/12x", root);
	fake_proc_fds(20, 3,
		      LIST("/dev/null", "anon_inode:kvm-vm", "socket:[1]",
			   "anon_inode:kvm-vcpu-stats:1",
			   "anon_inode:kvm-vm-stats", "anon_inode:kvm-vcpu:1"));
	fake_proc(21, NULL);
	rootfd = open(root, O_RDONLY | O_DIRECTORY);
	ck_assert_int_ge(rootfd, 0);

	n = vm_proc_pids(rootfd, &pids);
	ck_assert_int_eq(n, 7);
	ck_assert_int_eq(pids[0], 1);
	ck_assert_int_eq(pids[1], 7);
	ck_assert_int_eq(pids[2], 12);
	ck_assert_int_eq(pids[3], 20);
	ck_assert_int_eq(pids[4], 21);
	ck_assert_int_eq(pids[5], 300);
	ck_assert_int_eq(pids[6], 4000);
	free(pids);

	ck_assert_int_eq(vm_proc_fds(rootfd, 20, fd_note, &s), 0);
	ck_assert_int_eq(s.n, 4);
	for (int i = 0; i < s.n; i++) {
		if (s.fd[i] == 8) {
			ck_assert_int_eq(s.kind[i], VM_FD_VCPU);
			ck_assert_int_eq(s.vcpu[i], 1);
		} else if (s.fd[i] == 4) {
			ck_assert_int_eq(s.kind[i], VM_FD_VM);
		} else if (s.fd[i] == 6) {
			ck_assert_int_eq(s.kind[i], VM_FD_STATS);
			ck_assert_int_eq(s.vcpu[i], 1);
		} else {
			ck_assert_int_eq(s.fd[i], 7);
			ck_assert_int_eq(s.kind[i], VM_FD_STATS);
			ck_assert_int_eq(s.vcpu[i], -1);
		}
	}
	memset(&s, 0, sizeof(s));
	s.stop_at = 2;
	ck_assert_int_eq(vm_proc_fds(rootfd, 20, fd_note, &s), 5);
	ck_assert_int_eq(s.n, 2);
	ck_assert_int_eq(vm_proc_fds(rootfd, 21, fd_note, &s), -ENOENT);
	ck_assert_int_eq(vm_proc_fds(rootfd, 99, fd_note, &s), -ENOENT);
	ck_assert_int_eq(s.n, 2);

	/* procfs gives the fd count as the directory's size; not tmpfs */
	ck_assert_int_eq(vm_proc_nfds(rootfd, 99), 0);
	/* field 22 of stat, after a command name with blanks and parens */
	snprintf(path, sizeof(path), "%s/20/stat", root);
	write_file(path, stat, strlen(stat));
	ck_assert_uint_eq(vm_proc_start_ticks(rootfd, 20), 987654);
	ck_assert_uint_eq(vm_proc_start_ticks(rootfd, 7), 0);
	/* the vCPUs a VM holds: its kvm-vcpu fds */
	{
		int *idx;

		ck_assert_int_eq(vm_vcpu_fds(root, 20, &idx), 1);
		ck_assert_int_eq(idx[0], 1);
		free(idx);
		ck_assert_int_eq(vm_vcpu_fds(root, 7, &idx), 0);
		ck_assert_ptr_null(idx);
		ck_assert_int_eq(vm_vcpu_fds(root, 99, &idx), -ENOENT);
	}
	close(rootfd);
	fake_root_rm();

	/* the real /proc: this process, its fd count and start */
	rootfd = open("/proc", O_RDONLY | O_DIRECTORY);
	ck_assert_int_ge(rootfd, 0);
	n = vm_proc_pids(rootfd, &pids);
	ck_assert_int_gt(n, 1);
	for (int i = 1; i < n; i++)
		ck_assert_int_lt(pids[i - 1], pids[i]);
	free(pids);
	ck_assert_uint_gt(vm_proc_start_ticks(rootfd, 0), 0);
	ck_assert_uint_eq(vm_proc_start_ticks(rootfd, 0),
			  vm_proc_start_ticks(rootfd, getpid()));
	close(rootfd);
}
END_TEST

static double elapsed_ms(const struct timespec *a)
{
	struct timespec b;

	clock_gettime(CLOCK_MONOTONIC, &b);
	return (double)(b.tv_sec - a->tv_sec) * 1e3 +
	       (double)(b.tv_nsec - a->tv_nsec) / 1e6;
}

/* Thousands of fds in one process and hundreds of processes stay cheap. */
START_TEST(test_many_fds_and_processes)
{
	static const char *fds[3001];
	struct vm_info *v;
	struct timespec t0;
	size_t n;

	fake_root();
	for (int i = 0; i < 3000; i++)
		fds[i] = "/dev/null";
	fds[2999] = "anon_inode:kvm-vm";
	fds[3000] = NULL;
	fake_proc_fds(5000, 0, fds); /* VM fd last of 3000 */
	fds[2999] = "anon_inode:kvm-vm-stats";
	fake_proc_fds(5001, 0, fds); /* 3000 fds, no VM */
	fds[0] = "anon_inode:kvm-vm";
	fake_proc_fds(5002, 0, fds); /* VM fd first */
	for (int i = 0; i < 20; i++)
		fds[i] = i == 10 ? "socket:[1234]" : "/dev/null";
	fds[20] = NULL;
	for (pid_t p = 1; p <= 300; p++)
		fake_proc(p, fds);

	clock_gettime(CLOCK_MONOTONIC, &t0);
	ck_assert_int_eq(vm_list(root, &v, &n), 0);
	printf("vm_list: 303 fake processes, 15000 fds: %.2f ms\n",
	       elapsed_ms(&t0));
	ck_assert_uint_eq(n, 2);
	ck_assert_int_eq(v[0].pid, 5000);
	ck_assert_int_eq(v[1].pid, 5002);
	vm_list_free(v, n);
	ck_assert(vm_pid_is_vm(root, 5000));
	ck_assert(!vm_pid_is_vm(root, 5001));
	fake_root_rm();
}
END_TEST

START_TEST(test_real_self_not_vm)
{
	struct vm_info *v;
	struct timespec t0;
	struct errmsg err;
	size_t n;

	ck_assert(!vm_pid_is_vm("/proc", getpid()));
	ck_assert_ptr_null(vm_guest_name("/proc", getpid()));
	ck_assert_int_eq(vm_resolve_pid("/proc", getpid(), &err), -ENOENT);
	assert_one_line(err.text);

	clock_gettime(CLOCK_MONOTONIC, &t0);
	ck_assert_int_eq(vm_list("/proc", &v, &n), 0);
	printf("vm_list(/proc): %zu VMs in %.2f ms\n", n, elapsed_ms(&t0));
	for (size_t i = 0; i < n; i++)
		ck_assert_int_ne(v[i].pid, getpid());
	vm_list_free(v, n);
}
END_TEST

/* A thread named like QEMU's vCPU 0: says its tid, then waits for EOF. */
struct fake_vcpu {
	int ready[2]; /* the thread writes its tid here once named */
	int park[2];  /* closing park[1] ends the thread */
};

static void *fake_vcpu_thread(void *arg)
{
	struct fake_vcpu *f = arg;
	pid_t tid = gettid();
	char c;

	if (pthread_setname_np(pthread_self(), "CPU 0/KVM"))
		tid = -1;
	if (write(f->ready[1], &tid, sizeof(tid)) != sizeof(tid))
		return NULL;
	while (read(f->park[0], &c, 1) < 0 && errno == EINTR)
		;
	return NULL;
}

START_TEST(test_real_kvm_vm)
{
	struct fake_vcpu f;
	struct vm_info *v;
	pid_t vcpu_tid;
	pthread_t th;
	struct errmsg err;
	int kvm, vm;
	size_t n, i;

	kvm = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (kvm < 0) {
		test_skip("test_real_kvm_vm", "cannot open /dev/kvm: %s",
			  strerror(errno));
		return;
	}
	vm = ioctl(kvm, KVM_CREATE_VM, 0);
	if (vm < 0) {
		int e = errno;

		close(kvm);
		test_skip("test_real_kvm_vm", "KVM_CREATE_VM failed: %s",
			  strerror(e));
		return;
	}
	ck_assert_int_eq(pipe2(f.ready, O_CLOEXEC), 0);
	ck_assert_int_eq(pipe2(f.park, O_CLOEXEC), 0);
	ck_assert_int_eq(pthread_create(&th, NULL, fake_vcpu_thread, &f), 0);
	ck_assert_int_eq(read(f.ready[0], &vcpu_tid, sizeof(vcpu_tid)),
			 sizeof(vcpu_tid));
	ck_assert_int_gt(vcpu_tid, 0);

	ck_assert(vm_pid_is_vm("/proc", getpid()));
	ck_assert_int_eq(vm_resolve_pid("/proc", getpid(), &err), 0);
	ck_assert_int_eq(vm_list("/proc", &v, &n), 0);
	for (i = 0; i < n && v[i].pid != getpid(); i++)
		;
	ck_assert_msg(i < n, "vm_list did not find this process %d", getpid());
	ck_assert_uint_eq(v[i].nvcpus, 1);
	ck_assert_int_eq(v[i].vcpus[0].index, 0);
	ck_assert_int_eq(v[i].vcpus[0].tid, vcpu_tid);
	vm_list_free(v, n);

	close(f.park[1]);
	pthread_join(th, NULL);
	close(f.park[0]);
	close(f.ready[0]);
	close(f.ready[1]);

	/* without its VM fd the process is an ordinary one again */
	close(vm);
	close(kvm);
	ck_assert(!vm_pid_is_vm("/proc", getpid()));
}
END_TEST

/* KVM's debugfs "PID-FD" names give the VM processes: a thread's id maps
 * to its process through status, repeats and other entries are dropped. */
START_TEST(test_debugfs_pids)
{
	char dbg[160], path[512];
	pid_t *pids = NULL, pid = 0;
	int dfd, pfd, n;

	ck_assert_int_eq(vm_debugfs_name("1234-11", &pid), 0);
	ck_assert_int_eq(pid, 1234);
	ck_assert_int_eq(vm_debugfs_name("1234-", &pid), -EINVAL);
	ck_assert_int_eq(vm_debugfs_name("-11", &pid), -EINVAL);
	ck_assert_int_eq(vm_debugfs_name("halt_exits", &pid), -EINVAL);
	ck_assert_int_eq(vm_debugfs_name("12a-3", &pid), -EINVAL);
	ck_assert_int_eq(vm_debugfs_name("0-3", &pid), -EINVAL);
	ck_assert_int_eq(vm_debugfs_name("99999999999-3", &pid), -EINVAL);

	fake_root();
	snprintf(dbg, sizeof(dbg), "%s/dbg", root);
	mkdirf("%s", dbg);
	mkdirf("%s/300-12", dbg);
	mkdirf("%s/300-14", dbg); /* a second VM of the same process */
	mkdirf("%s/77-9", dbg);
	mkdirf("%s/451-10", dbg); /* made by thread 451 of process 450 */
	mkdirf("%s/vcpu0", dbg);
	snprintf(path, sizeof(path), "%s/halt_exits", dbg);
	write_file(path, "0\n", 2);
	mkdirf("%s/451", root);
	snprintf(path, sizeof(path), "%s/451/status", root);
	{
		static const char st[] =
			"Name:\tq\nUmask:\t0022\nState:\tS\nTgid:\t450\nPid:\t451\n";

		write_file(path, st, sizeof(st) - 1);
	}
	dfd = open(dbg, O_RDONLY | O_DIRECTORY);
	pfd = open(root, O_RDONLY | O_DIRECTORY);
	ck_assert_int_ge(dfd, 0);
	ck_assert_int_ge(pfd, 0);
	n = vm_debugfs_pids(dfd, pfd, &pids);
	ck_assert_int_eq(n, 3);
	ck_assert_int_eq(pids[0], 77);
	ck_assert_int_eq(pids[1], 300);
	ck_assert_int_eq(pids[2], 450);
	free(pids);
	ck_assert_int_eq(vm_proc_tgid(pfd, 451), 450);
	ck_assert_int_eq(vm_proc_tgid(pfd, 12345), 12345);
	close(dfd);
	close(pfd);
	fake_root_rm();
}
END_TEST

Suite *vm_suite(void)
{
	Suite *s = suite_create("vm");
	TCase *fake = tcase_create("fake_proc");
	TCase *real = tcase_create("real_proc");
	TCase *kvm = test_kvm_tcase("real_kvm");

	tcase_add_test(fake, test_only_vm_fds_count);
	tcase_add_test(fake, test_list_empty_and_bad_root);
	tcase_add_test(fake, test_guest_names);
	tcase_add_test(fake, test_guest_name_long_cmdline);
	tcase_add_test(fake, test_vcpus);
	tcase_add_test(fake, test_vcpus_by_kernel);
	tcase_add_test(fake, test_find_by_name);
	tcase_add_test(fake, test_find_by_identity);
	tcase_add_test(fake, test_resolve_pid);
	tcase_add_test(fake, test_resolve_guest);
	tcase_add_test(fake, test_resolve_cut_message);
	tcase_add_test(fake, test_many_fds_and_processes);
	tcase_add_test(fake, test_fd_kind);
	tcase_add_test(fake, test_proc_scan);
	tcase_add_test(fake, test_debugfs_pids);
	tcase_add_unchecked_fixture(fake, top_create, top_remove);
	tcase_set_timeout(fake, 30);
	suite_add_tcase(s, fake);
	tcase_add_test(real, test_real_self_not_vm);
	suite_add_tcase(s, real);
	tcase_add_test(kvm, test_real_kvm_vm);
	suite_add_tcase(s, kvm);
	return s;
}
