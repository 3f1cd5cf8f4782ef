/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * VM discovery from procfs: which processes hold a KVM VM, what their guests
 * are called on the QEMU command line, and which of their threads run which
 * vCPU. Every function takes the proc root ("/proc", or a fake tree in the
 * tests) so nothing here is tied to the running system.
 */
#ifndef KVMSTAT_VM_H
#define KVMSTAT_VM_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct errmsg;

/* One vCPU thread: its index and its thread id, and whether the kernel
 * said so or only the thread's name. */
struct vm_vcpu {
	int index;   /* the vCPU's id: N of "anon_inode:kvm-vcpu:N" */
	pid_t tid;   /* thread id within the VM process */
	bool kernel; /* the kernel showed it running that vCPU (KVM_RUN on
		      * its fd, KVM's debugfs, kvm_exit's vCPU); false: its
		      * name alone ("CPU N/KVM"), nothing the kernel showed
		      * against it */
};

/*
 * Adds what c says (thread c->tid runs vCPU c->index) to the *n vCPU
 * threads *v, as every part of kvmstat weighs what it learns: what the
 * kernel showed stays (its first word on a thread or a vCPU), what a name
 * alone said gives way to the kernel's word on that thread or vCPU, and
 * a name adds nothing against any word on them.
 */
void vm_vcpus_learn(struct vm_vcpu **v, size_t *n, const struct vm_vcpu *c);

/* One KVM VM process. name and vcpus belong to the struct. */
struct vm_info {
	pid_t pid;	       /* process holding the anon_inode:kvm-vm fd */
	char *name;	       /* guest name from the command line, or NULL */
	size_t nvcpus;	       /* known vCPU threads, sorted by index */
	struct vm_vcpu *vcpus; /* nvcpus entries, or NULL when none */
	bool named; /* vcpus from the threads' names; else from what the
			  * kernel says (threads in KVM_RUN, KVM's debugfs) */
	int nheld;  /* vCPUs KVM's debugfs has for the VM (one that has
			  * not run has no thread yet), or -1: not read, or
			  * none there (arm64's KVM makes no vcpuN) */
};

/*
 * Every process holding a KVM VM fd (a /proc/PID/fd/N link reading exactly
 * "anon_inode:kvm-vm"), sorted by pid, with names and vCPUs filled in.
 * Processes that vanish or deny access mid-scan are skipped. Returns 0, or
 * -errno when proc_root itself cannot be read. On success *out (NULL when
 * *n is 0) is the caller's to free with vm_list_free().
 */
int vm_list(const char *proc_root, struct vm_info **out, size_t *n);
void vm_list_free(struct vm_info *v, size_t n);
/*
 * The pids of vm_list() alone, sorted, without reading names or vCPU
 * threads (a caller that keeps names per pid looks up new VMs only).
 * Returns the count (0: none, *pids NULL) or -errno; the caller frees
 * *pids.
 */
int vm_list_pids(const char *proc_root, pid_t **pids);
/* Frees what one vm_info owns (name, vcpus) and zeroes those fields. */
void vm_info_clear(struct vm_info *v);

/* True when pid exists, its fds can be read and one of them is a KVM VM. */
bool vm_pid_is_vm(const char *proc_root, pid_t pid);

/*
 * Guest name from /proc/PID/cmdline, parsed the way QEMU parses "-name"
 * (or "--name"): "guest=NAME,...", a bare first "NAME,...", ",," for a
 * literal comma, the last one winning. A new string the caller frees, or NULL
 * when there is no (or an empty) name or the process cannot be read.
 */
char *vm_guest_name(const char *proc_root, pid_t pid);
/*
 * The same from a command line already read: len bytes of NUL-separated
 * arguments, argv[0] first, with buf[len] a NUL (as fs_read_all_at()
 * leaves it). A new string the caller frees, or NULL.
 */
char *vm_name_from_cmdline(const char *buf, size_t len);

/*
 * Pids of the VMs that name names (vm_ident_matches: equal to the name
 * QEMU's -name or another manager gives it, its UUID or its systemd unit),
 * sorted. run_root is "/run" or a fake tree, or NULL to read none (names
 * from libvirt's pid files and systemd-machined are then unknown).
 * Returns the count (0: none, *pids NULL) or -errno; the caller frees
 * *pids.
 */
int vm_find_by_name(const char *proc_root, const char *run_root,
		    const char *name, pid_t **pids);

/*
 * vCPU threads of VM v->pid as the kernel shows them, with the threads'
 * names as a hint. The kernel: a thread whose system call now
 * (task/TID/syscall, readable by the VM's owner) is ioctl(FD, KVM_RUN)
 * on an "anon_inode:kvm-vcpu:N" fd runs vCPU N (one running guest code
 * reads "running" there: it is seen once it waits in the kernel, in a
 * halt or an exit). The names: QEMU's "CPU N/KVM" (with -name
 * ...,debug-threads=on), Firecracker's "fc_vcpu N", cloud-hypervisor's
 * "vcpuN", crosvm's "crosvm_vcpuN", kvmtool's "kvm-vcpu-N" (v->named
 * when a thread has one). Where threads are named so, those threads are
 * the ones asked; elsewhere every thread. A named thread the kernel did
 * not show now is taken as its name's vCPU unless the kernel showed
 * another thread running it (kernel false); a thread neither shows is
 * not known yet. Replaces v->vcpus (freeing the old array) with the
 * threads sorted by index. Returns 0, or -errno when the task directory
 * cannot be read, leaving v with no vCPUs.
 */
int vm_load_vcpus(const char *proc_root, struct vm_info *v);

/*
 * The same from KVM's debugfs tree (debugfs_root is its kvm directory):
 * DIR/PID-FD/vcpuN/pid holds the thread of vCPU N (0 until it first ran:
 * such a vCPU is left out). The file is read-only, so it stays readable
 * under kernel lockdown; it serves VMMs that do not name their threads.
 * Returns how many vCPUs the VM has there (run or not), or -errno.
 */
int vm_load_vcpus_debugfs(const char *debugfs_root, struct vm_info *v);
/* The vCPUs VM pid holds, whatever their threads: its
 * "anon_inode:kvm-vcpu:N" fds' N, sorted, into *out (the caller frees;
 * NULL when none). Returns the count or -errno. */
int vm_vcpu_fds(const char *proc_root, pid_t pid, int **out);
/* The threads of process pid now (from its task directory's link
 * count: one call, nothing listed), or 0 when it cannot be told. */
unsigned long vm_thread_count(const char *proc_root, pid_t pid);
/*
 * vCPU threads as every part of kvmstat finds them: vm_load_vcpus, and
 * where a vCPU of it is not known from the kernel, KVM's debugfs tree
 * (debugfs_root may be NULL: /proc alone; reading it sets v->nheld),
 * which wins over a name. Returns 0 or -errno, as those.
 */
int vm_load_vcpu_threads(const char *proc_root, const char *debugfs_root,
			 struct vm_info *v);

/*
 * The scan over processes and their fd links, on a proc root opened by the
 * caller (fs_open_dir): vm.c's VM discovery and the statsfd provider's
 * search for stats fds both go through it.
 */

/* What a /proc/PID/fd link is. */
enum vm_fd_kind {
	VM_FD_OTHER = 0,
	VM_FD_VM,    /* "anon_inode:kvm-vm": the VM fd itself */
	VM_FD_STATS, /* "anon_inode:kvm-vm-stats" (vcpu -1) or
				 * "anon_inode:kvm-vcpu-stats:N" (vcpu N) */
	VM_FD_VCPU,  /* "anon_inode:kvm-vcpu:N" (vcpu N): the vCPU exists */
};

/* Classifies the n bytes readlink gave for an fd; exact matches only.
 * Sets *vcpu for a stats fd. */
enum vm_fd_kind vm_fd_kind(const char *link, size_t n, int *vcpu);

/* Called for each KVM fd of a process (fd is its number there, vcpu as
 * vm_fd_kind() says); non-zero ends the walk, which returns it. */
typedef int (*vm_fd_fn)(int fd, enum vm_fd_kind kind, int vcpu, void *ctx);

/*
 * Calls fn for every fd of process pid (rootfd/PID/fd) whose link is a
 * KVM file, in listing order. Returns 0, fn's value when it ended the walk,
 * or -errno when the fd directory cannot be opened (gone, or not ours to
 * read: -EACCES/-EPERM). A listing that fails midway (the process exited)
 * ends quietly.
 */
int vm_proc_fds(int rootfd, pid_t pid, vm_fd_fn fn, void *ctx);

/* Every process under rootfd, ascending into *pids (the caller frees it;
 * NULL when none). Returns the count or -errno. */
int vm_proc_pids(int rootfd, pid_t **pids);

/*
 * The processes holding a KVM VM, from the names of the directories KVM
 * makes in its debugfs directory (debugfs_dirfd) for each VM, "PID-FD",
 * without reading any process's fds; they are listed even under kernel
 * lockdown. PID is the creating thread: mapped to its process through
 * rootfd/PID/status. Ascending, without repeats, into *pids (the caller
 * frees it; NULL when none). Returns the count or -errno.
 */
int vm_debugfs_pids(int debugfs_dirfd, int rootfd, pid_t **pids);

/* Whether the processes under rootfd are numbered as the kernel numbers
 * them (the initial pid namespace, whose ns inode is fixed): only then do
 * debugfs "PID-FD" names give their pids. True when it cannot be told. */
bool vm_pidns_is_init(int rootfd);

/* Parses a KVM debugfs VM directory name "PID-FD": 0 with *pid, or
 * -EINVAL for any other name. */
int vm_debugfs_name(const char *name, pid_t *pid);

/* The process (thread group) of thread tid, from rootfd/TID/status; tid
 * itself when that cannot be read. */
pid_t vm_proc_tgid(int rootfd, pid_t tid);

/* How many fds a process has open: the size procfs gives its fd directory
 * (Linux 6.2 and later), or 0 when unknown. */
off_t vm_proc_nfds(int rootfd, pid_t pid);

/* Start time of a process (pid 0: "self") in clock ticks after boot, field
 * 22 of its stat file; 0 when unknown. */
unsigned long long vm_proc_start_ticks(int rootfd, pid_t pid);

/*
 * Checks -p PID for main. Returns 0 when pid is a running KVM VM; otherwise
 * -EINVAL (pid not positive), -ESRCH (no such process), -EACCES (its fds
 * cannot be read) or -ENOENT (not a VM), with one line in msg saying what is
 * wrong and what to do.
 */
int vm_resolve_pid(const char *proc_root, pid_t pid, struct errmsg *msg);

/*
 * Turns -g NAME into the pid of the one VM it names (vm_ident_matches: its
 * manager's name for it, its UUID or its unit; run_root as for
 * vm_ident_read). Returns 0 and sets *pid; otherwise -ENOENT (no such
 * guest), -ENOTUNIQ (several VMs have it) or another -errno, with one line
 * in msg saying what to do.
 */
int vm_resolve_guest(const char *proc_root, const char *run_root,
		     const char *name, pid_t *pid, struct errmsg *msg);

#endif
