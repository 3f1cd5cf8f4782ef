/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The inside of the statsfd provider (src/providers/statsfd/), shared by
 * its parts: statsfd.c (the provider: open, read, close), notes.c (its
 * notices), scan.c (finding VM processes and their stats fds), copies.c
 * (the VMs tracked and the stats fds copied from them), watch.c (pidfds,
 * inotify and young VMs between refreshes) and schema.c (layouts bound
 * to fields). Nothing outside that folder includes it. Its names carry
 * the prefix sfd_.
 */
#ifndef KVMSTAT_STATSFD_INT_H
#define KVMSTAT_STATSFD_INT_H

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "errmsg.h"
#include "sample.h"

struct provider_cfg;
struct provider;
struct reading;
struct sample_set;
struct statsfd_desc;
struct statsfd_schema;

/* How often /proc is walked again for new VMs and stats fds; when
 * inotify watches KVM's debugfs directory and every VM's own (new VMs and
 * vCPUs are told as they come, exits by pidfds), only this seldom, for a
 * VMM that opens its stats fds long after its vCPUs. */
#define SFD_RESCAN_NS 2000000000ull
#define SFD_RESCAN_WATCHED_NS 30000000000ull
/* Every how many scans the fd counts are not trusted (see sfd_scan_pid). */
#define SFD_FULL_SCAN_EVERY 5
/* Pids a notice names before it says "and N more". */
#define SFD_NOTE_PIDS 8
/* A VM just created is looked at this often for the stats fds its VMM
 * opens after creating it, for this long: every millisecond at first (a
 * VM may live a few), then every 10 ms. */
#define SFD_YOUNG_FAST_NS 1000000ull
#define SFD_YOUNG_FAST_FOR_NS 200000000ull
#define SFD_YOUNG_EVERY_NS 10000000ull
#define SFD_YOUNG_FOR_NS 2000000000ull
/* epoll tags: a VM's pidfd carries its pid above these */
#define SFD_EV_INOTIFY 1ull
#define SFD_EV_TIMER 2ull
#define SFD_EV_PID (1ull << 32)

/* A field this provider pushes. */
struct sfd_local {
	int field;	      /* id in the field table */
	enum field_type type; /* how it aggregates: peaks by maximum */
};

/* One u64 of a data block that this provider pushes. */
struct sfd_item {
	uint32_t off;	      /* bytes from the start of the range read */
	int local;	      /* local index */
	enum field_type type; /* its local's */
};

/* A parsed layout and where its values go; shared by files alike and
 * kept while the provider lives (a kernel has two: VM and vCPU). Only
 * the bytes [lo, hi) of the data block hold wanted stats: a refresh
 * reads those (none at all when lo == hi, e.g. the VM's own stats under
 * a filter that keeps only vCPU stats). */
struct sfd_schema {
	struct statsfd_schema *s;
	uint32_t lo, hi;       /* the range of the data block read */
	struct sfd_item *item; /* the wanted items, in data order */
	size_t nitem;
};

/* One stats fd copied from a VM process. */
struct sfd_file {
	int fd;	   /* our copy */
	int srcfd; /* its number in the VM process */
	int vcpu;  /* vCPU index, or -1 for the VM's own stats */
	pid_t tid; /* the vCPU's thread, 0 when unknown */
	struct sfd_schema *sc;
	unsigned char *base; /* its range (sc->lo..hi) at discovery,
			      * subtracted from cumulative values; NULL:
			      * counted from 0 */
	bool mark;	     /* seen by the scan running now */
	unsigned char *last; /* its process closed it or exited: its range
			      * read last, once the copy was closed (fd -1) */
};

/* One VM process. */
struct sfd_vm {
	pid_t pid;
	int pidfd;	    /* polled for its exit */
	bool old;	    /* its process started before kvmstat */
	bool noted;	    /* what it lacks was told once */
	bool mark;	    /* seen by the scan running now */
	bool dead;	    /* its process exited: read for the last time
			     * (files hold their last data), then dropped */
	int err;	    /* copying its fds failed: -errno, else 0 */
	int wd;		    /* inotify watch on its debugfs directory
			     * (its vCPUs come there), or -1 */
	off_t nfds;	    /* its open fds when all its stats fds were
				 * last held, 0: list them again */
	size_t nlinks;	    /* stats fds it had at its last listing */
	struct sfd_file *f; /* sorted by vcpu, VM-scope (-1) first */
	size_t nf, capf;
};

/* A process that held no VM fd when its fds were last listed. */
struct sfd_known {
	pid_t pid;
	off_t nfds; /* its open fds then */
};

/* A stats link found in a process's fd directory. */
struct sfd_link {
	int srcfd;
	int vcpu; /* -1: the VM's stats */
};

/* A VM created moments ago, looked at again until its stats fds are
 * open (its VMM opens them after creating the VM). */
struct sfd_young {
	pid_t pid;
	uint64_t until; /* monotonic ns */
};

struct sfd_priv {
	char *proc_root;
	int rootfd;
	/* KVM's debugfs directory, whose "PID-FD" entries name the VMs
	 * (-1: not readable, or not of the same tree as proc_root) */
	int dbgfd;
	/* its names give pids as the proc root numbers them (not in a pid
	 * namespace of our own): else they only say that a VM came */
	bool names_ok;
	int epfd;	  /* pidfds, inotify and the timer: the loop polls it */
	int inofd;	  /* inotify on dbgfd's directory, or -1 */
	char *dbg_path;	  /* dbgfd's path, for watches on VMs' directories */
	int dbgwd;	  /* inotify's watch on it */
	bool all_watched; /* every VM's directory is watched too */
	int tfd;	  /* timerfd for young VMs, or -1 */
	struct sfd_young *young;
	size_t nyoung, capyoung;
	/* per local index: what exited VMs counted (cumulative fields) */
	struct reading *retired;
	bool rebase_next; /* a VM went without its last reading */
	pid_t pid;	  /* -p, or 0 */
	pid_t self;
	bool include_past;
	unsigned long long self_start; /* our start, ticks after boot */
	struct sfd_vm *vms;	       /* sorted by pid */
	size_t nvms, capvms;
	struct sfd_schema **schemas;
	size_t nschemas;
	struct sfd_local *locals;
	size_t nlocals, caplocals;
	int *local_of; /* field id -> local index or -1 */
	size_t nlocal_of;
	/* the local indexes by field id: the order samples are pushed in
	 * (the arbiter keeps (VM, field) pairs sorted); norder locals */
	int *order;
	size_t norder;
	/* per local index: the sum over VMs, over one VM, over one vCPU */
	struct reading *val, *vmval, *vcval;
	unsigned char *data; /* one data block */
	size_t capdata;
	struct pollfd *pfd;
	size_t cappfd;
	struct sfd_link *links;
	size_t caplinks;
	/* processes without a VM, by pid: the last scan's and this one's */
	struct sfd_known *known, *known_next;
	size_t nknown, nknown_next, capknown;
	unsigned int scans;  /* scans so far */
	uint64_t last_scan;  /* monotonic ns */
	unsigned long reads; /* completed refreshes */
	/* the last read reported the vCPUs' readings (or none was made):
	 * else the next that does marks them SAMPLE_BASELINE */
	bool vcpus_told;
	bool vanished;	/* a VM went without its last reading */
	bool fake_proc; /* proc_root is not /proc (tests) */
	bool emfile_noted, denied_noted, gone_noted;
	size_t ndenied;	    /* processes whose fds are hidden */
	struct errmsg note; /* notices gathered in this call */
};

/* notes.c */
/* Appends one notice to d->note ("; " between them). */
__attribute__((format(printf, 2, 3))) void sfd_note_add(struct sfd_priv *d,
							const char *fmt, ...);
/* Whether err is a permission error (-EPERM, -EACCES). */
bool sfd_denied_errno(int err);
/* The fix for a permission error on a VM process's fds. */
extern const char sfd_perm_hint[];
/* Hands the gathered notices to main, after any not shown yet. */
void sfd_note_flush(struct provider *p);

/* schema.c */
/* The shared schema for a file just parsed (s is consumed). */
struct sfd_schema *sfd_schema_get(struct provider *p, struct statsfd_schema *s);
/* Frees a bound schema and the parsed layout it holds. */
void sfd_schema_free(struct sfd_schema *sc);
/* The bytes of a file's range: what sfd_file_fetch reads. */
static inline size_t sfd_range_len(const struct sfd_schema *sc)
{
	return sc->hi - sc->lo;
}
/* Reads the range of fd (a file of layout sc) into buf, which holds
 * sfd_range_len(sc) bytes; no read when it is empty. 0 or -errno. */
int sfd_file_fetch(const struct sfd_schema *sc, int fd, void *buf);
/*
 * The fields of the kernel's binary stats before any VM runs, so that
 * the first sample already has every one (the log's columns are fixed
 * then): a scratch VM and vCPU of our own, made through /dev/kvm, give
 * the kernel's two layouts. Without /dev/kvm access the fields come with
 * the first VM, as before.
 */
void sfd_schema_at_start(struct provider *p);

/* copies.c */
/* Closes everything copied from a VM: its kernel memory can go. */
void sfd_vm_close(struct sfd_vm *vm);
/*
 * vm's process exited, or holds no VM any more: each file is read one
 * last time and its copy closed (the kernel can free the VM). The next
 * refresh counts those last values, then drops the VM.
 */
void sfd_vm_finish(struct sfd_vm *vm);
/*
 * Brings vm's files in line with the n stats links just found: new ones
 * are copied; one the VMM closed is read a last time and keeps those
 * values (a VMM tearing down closes its vCPUs' stats fds before it exits)
 * until the same vCPU's stats come back under another fd, which then
 * count on from where the kernel is. Whether every link is now held.
 */
bool sfd_vm_sync(struct provider *p, struct sfd_vm *vm, size_t n);
/* Starts tracking VM process pid; NULL when it went meanwhile. */
struct sfd_vm *sfd_vm_add(struct sfd_priv *d, pid_t pid);
/* The tracked VM of process pid, or NULL (d->vms is sorted by pid). */
struct sfd_vm *sfd_vm_find(struct sfd_priv *d, pid_t pid);
/* qsort order of d->vms: by pid. */
int sfd_vm_cmp(const void *a, const void *b);
/* The VMs the scan did not find: read a last time (dropped after the
 * next refresh), or forgotten when nothing was copied. */
void sfd_vms_sweep(struct sfd_priv *d);

/* scan.c */
/* Whether pid may be a VM created moments ago: it is one, or a VM came
 * whose process could not be told (young pid 0: any may be). */
bool sfd_young_maybe(const struct sfd_priv *d, pid_t pid);
/*
 * Walks the proc root: new VM processes are tracked, their stats fds
 * copied; fds the VMMs closed are closed here too, and VMs that are no
 * longer VMs (or no longer there) are dropped.
 */
void sfd_scan(struct provider *p, uint64_t now);
/* Without an epoll set (no fd left for one): the VMs whose process
 * exited, by one poll over every pidfd. */
void sfd_reap(struct sfd_priv *d);
/* Looks at one process now (a VM just created, or a young one again).
 * 0, or -errno when its fd directory could not be read (gone, hidden). */
int sfd_scan_one(struct provider *p, pid_t pid);

/* watch.c */

/*
 * Whatever happened since the last look, without blocking: VMs whose
 * process exited are read a last time and their copies closed, VMs just
 * created have their stats fds copied, young VMs are looked at again.
 */
void sfd_wake(struct provider *p);
/* The epoll fd the loop polls between refreshes, or -1. */
int sfd_wake_fd(struct provider *p);
/*
 * Watches the debugfs directories of the VMs without a watch yet, so that
 * the vCPUs they create later are looked at as they come; sets
 * all_watched when every VM then is (the full scan can be seldom:
 * SFD_RESCAN_WATCHED_NS).
 */
void sfd_watch_vms(struct sfd_priv *d);
/* Ends the watch on a VM dropped. */
void sfd_unwatch(struct sfd_priv *d, struct sfd_vm *vm);
/*
 * KVM's debugfs directory, when it is of the same tree as the proc root
 * (both the system's, or both injected by a test): its "PID-FD" entries
 * name the VMs to scan, and inotify on it tells of each VM as it is
 * created. Then the epoll set the loop polls: inotify, the timer for
 * young VMs and, as they come, each VM's pidfd.
 */
void sfd_watch_open(struct sfd_priv *d, const struct provider_cfg *opts);

#endif
