// SPDX-License-Identifier: GPL-2.0-only
/*
 * The x86 descriptor. kvm_exit's exit_reason is decoded by one of two
 * tables, picked by its isa field (1 VMX, 2 SVM). The fallback names, for
 * kernels whose kvm_exit format has no table: Intel VMX basic exit reasons
 * (SDM Vol. 3, Appendix C) and AMD SVM exit codes (APM Vol. 2, Appendix C,
 * plus the GHCB software exit codes of SEV-ES guests), named the way KVM's
 * own tracepoints name them. The ISA is told by the loaded vendor module,
 * not by CPU flags, which nested and paravirtualised hosts do not show.
 */
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "arch.h"
#include "fs.h"
#include "util.h"

/* VMX basic exit reasons: bits 15:0 of the exit reason. */
static const struct arch_exit_reason x86_vmx_reasons[] = {
	{ 0, "EXCEPTION_NMI" },
	{ 1, "EXTERNAL_INTERRUPT" },
	{ 2, "TRIPLE_FAULT" },
	{ 3, "INIT_SIGNAL" },
	{ 4, "SIPI_SIGNAL" },
	{ 5, "IO_SMI" },
	{ 6, "OTHER_SMI" },
	{ 7, "INTERRUPT_WINDOW" },
	{ 8, "NMI_WINDOW" },
	{ 9, "TASK_SWITCH" },
	{ 10, "CPUID" },
	{ 11, "GETSEC" },
	{ 12, "HLT" },
	{ 13, "INVD" },
	{ 14, "INVLPG" },
	{ 15, "RDPMC" },
	{ 16, "RDTSC" },
	{ 17, "RSM" },
	{ 18, "VMCALL" },
	{ 19, "VMCLEAR" },
	{ 20, "VMLAUNCH" },
	{ 21, "VMPTRLD" },
	{ 22, "VMPTRST" },
	{ 23, "VMREAD" },
	{ 24, "VMRESUME" },
	{ 25, "VMWRITE" },
	{ 26, "VMOFF" },
	{ 27, "VMON" },
	{ 28, "CR_ACCESS" },
	{ 29, "DR_ACCESS" },
	{ 30, "IO_INSTRUCTION" },
	{ 31, "MSR_READ" },
	{ 32, "MSR_WRITE" },
	{ 33, "INVALID_STATE" },
	{ 34, "MSR_LOAD_FAIL" },
	{ 36, "MWAIT_INSTRUCTION" },
	{ 37, "MONITOR_TRAP_FLAG" },
	{ 39, "MONITOR_INSTRUCTION" },
	{ 40, "PAUSE_INSTRUCTION" },
	{ 41, "MCE_DURING_VMENTRY" },
	{ 43, "TPR_BELOW_THRESHOLD" },
	{ 44, "APIC_ACCESS" },
	{ 45, "EOI_INDUCED" },
	{ 46, "GDTR_IDTR" },
	{ 47, "LDTR_TR" },
	{ 48, "EPT_VIOLATION" },
	{ 49, "EPT_MISCONFIG" },
	{ 50, "INVEPT" },
	{ 51, "RDTSCP" },
	{ 52, "PREEMPTION_TIMER" },
	{ 53, "INVVPID" },
	{ 54, "WBINVD" },
	{ 55, "XSETBV" },
	{ 56, "APIC_WRITE" },
	{ 57, "RDRAND" },
	{ 58, "INVPCID" },
	{ 59, "VMFUNC" },
	{ 60, "ENCLS" },
	{ 61, "RDSEED" },
	{ 62, "PML_FULL" },
	{ 63, "XSAVES" },
	{ 64, "XRSTORS" },
	{ 65, "PCONFIG" },
	{ 66, "SPP" },
	{ 67, "UMWAIT" },
	{ 68, "TPAUSE" },
	{ 69, "LOADIWKEY" },
	{ 70, "ENCLV" },
	{ 72, "ENQCMD_PASID_FAIL" },
	{ 73, "ENQCMDS_PASID_FAIL" },
	{ 74, "BUS_LOCK" },
	{ 75, "NOTIFY" },
	{ 76, "SEAMCALL" },
	{ 77, "TDCALL" },
	{ 78, "RDMSRLIST" },
	{ 79, "WRMSRLIST" },
	{ 80, "URDMSR" },
	{ 81, "UWRMSR" },
	{ 84, "MSR_READ_IMM" },
	{ 85, "MSR_WRITE_IMM" },
};

/* SVM exit codes (EXITCODE in the VMCB, as the tracepoint's 32-bit field). */
static const struct arch_exit_reason x86_svm_reasons[] = {
	{ 0x000, "read_cr0" },
	{ 0x001, "read_cr1" },
	{ 0x002, "read_cr2" },
	{ 0x003, "read_cr3" },
	{ 0x004, "read_cr4" },
	{ 0x005, "read_cr5" },
	{ 0x006, "read_cr6" },
	{ 0x007, "read_cr7" },
	{ 0x008, "read_cr8" },
	{ 0x009, "read_cr9" },
	{ 0x00a, "read_cr10" },
	{ 0x00b, "read_cr11" },
	{ 0x00c, "read_cr12" },
	{ 0x00d, "read_cr13" },
	{ 0x00e, "read_cr14" },
	{ 0x00f, "read_cr15" },
	{ 0x010, "write_cr0" },
	{ 0x011, "write_cr1" },
	{ 0x012, "write_cr2" },
	{ 0x013, "write_cr3" },
	{ 0x014, "write_cr4" },
	{ 0x015, "write_cr5" },
	{ 0x016, "write_cr6" },
	{ 0x017, "write_cr7" },
	{ 0x018, "write_cr8" },
	{ 0x019, "write_cr9" },
	{ 0x01a, "write_cr10" },
	{ 0x01b, "write_cr11" },
	{ 0x01c, "write_cr12" },
	{ 0x01d, "write_cr13" },
	{ 0x01e, "write_cr14" },
	{ 0x01f, "write_cr15" },
	{ 0x020, "read_dr0" },
	{ 0x021, "read_dr1" },
	{ 0x022, "read_dr2" },
	{ 0x023, "read_dr3" },
	{ 0x024, "read_dr4" },
	{ 0x025, "read_dr5" },
	{ 0x026, "read_dr6" },
	{ 0x027, "read_dr7" },
	{ 0x028, "read_dr8" },
	{ 0x029, "read_dr9" },
	{ 0x02a, "read_dr10" },
	{ 0x02b, "read_dr11" },
	{ 0x02c, "read_dr12" },
	{ 0x02d, "read_dr13" },
	{ 0x02e, "read_dr14" },
	{ 0x02f, "read_dr15" },
	{ 0x030, "write_dr0" },
	{ 0x031, "write_dr1" },
	{ 0x032, "write_dr2" },
	{ 0x033, "write_dr3" },
	{ 0x034, "write_dr4" },
	{ 0x035, "write_dr5" },
	{ 0x036, "write_dr6" },
	{ 0x037, "write_dr7" },
	{ 0x038, "write_dr8" },
	{ 0x039, "write_dr9" },
	{ 0x03a, "write_dr10" },
	{ 0x03b, "write_dr11" },
	{ 0x03c, "write_dr12" },
	{ 0x03d, "write_dr13" },
	{ 0x03e, "write_dr14" },
	{ 0x03f, "write_dr15" },
	/* 0x40 + exception vector, for the architecturally defined vectors. */
	{ 0x040, "DE excp" },
	{ 0x041, "DB excp" },
	{ 0x043, "BP excp" },
	{ 0x044, "OF excp" },
	{ 0x045, "BR excp" },
	{ 0x046, "UD excp" },
	{ 0x047, "NM excp" },
	{ 0x048, "DF excp" },
	{ 0x04a, "TS excp" },
	{ 0x04b, "NP excp" },
	{ 0x04c, "SS excp" },
	{ 0x04d, "GP excp" },
	{ 0x04e, "PF excp" },
	{ 0x050, "MF excp" },
	{ 0x051, "AC excp" },
	{ 0x052, "MC excp" },
	{ 0x053, "XF excp" },
	{ 0x055, "CP excp" },
	{ 0x05c, "HV excp" },
	{ 0x05d, "VC excp" },
	{ 0x05e, "SX excp" },
	{ 0x060, "interrupt" },
	{ 0x061, "nmi" },
	{ 0x062, "smi" },
	{ 0x063, "init" },
	{ 0x064, "vintr" },
	{ 0x065, "cr0_sel_write" },
	{ 0x066, "read_idtr" },
	{ 0x067, "read_gdtr" },
	{ 0x068, "read_ldtr" },
	{ 0x069, "read_tr" },
	{ 0x06a, "write_idtr" },
	{ 0x06b, "write_gdtr" },
	{ 0x06c, "write_ldtr" },
	{ 0x06d, "write_tr" },
	{ 0x06e, "rdtsc" },
	{ 0x06f, "rdpmc" },
	{ 0x070, "pushf" },
	{ 0x071, "popf" },
	{ 0x072, "cpuid" },
	{ 0x073, "rsm" },
	{ 0x074, "iret" },
	{ 0x075, "swint" },
	{ 0x076, "invd" },
	{ 0x077, "pause" },
	{ 0x078, "hlt" },
	{ 0x079, "invlpg" },
	{ 0x07a, "invlpga" },
	{ 0x07b, "io" },
	{ 0x07c, "msr" },
	{ 0x07d, "task_switch" },
	{ 0x07e, "ferr_freeze" },
	{ 0x07f, "shutdown" },
	{ 0x080, "vmrun" },
	{ 0x081, "hypercall" },
	{ 0x082, "vmload" },
	{ 0x083, "vmsave" },
	{ 0x084, "stgi" },
	{ 0x085, "clgi" },
	{ 0x086, "skinit" },
	{ 0x087, "rdtscp" },
	{ 0x088, "icebp" },
	{ 0x089, "wbinvd" },
	{ 0x08a, "monitor" },
	{ 0x08b, "mwait" },
	{ 0x08c, "mwait_cond" },
	{ 0x08d, "xsetbv" },
	{ 0x08e, "rdpru" },
	{ 0x08f, "write_efer_trap" },
	{ 0x090, "write_cr0_trap" },
	{ 0x091, "write_cr1_trap" },
	{ 0x092, "write_cr2_trap" },
	{ 0x093, "write_cr3_trap" },
	{ 0x094, "write_cr4_trap" },
	{ 0x095, "write_cr5_trap" },
	{ 0x096, "write_cr6_trap" },
	{ 0x097, "write_cr7_trap" },
	{ 0x098, "write_cr8_trap" },
	{ 0x099, "write_cr9_trap" },
	{ 0x09a, "write_cr10_trap" },
	{ 0x09b, "write_cr11_trap" },
	{ 0x09c, "write_cr12_trap" },
	{ 0x09d, "write_cr13_trap" },
	{ 0x09e, "write_cr14_trap" },
	{ 0x09f, "write_cr15_trap" },
	{ 0x0a0, "invlpgb" },
	{ 0x0a1, "invlpgb_illegal" },
	{ 0x0a2, "invpcid" },
	{ 0x0a3, "mcommit" },
	{ 0x0a4, "tlbsync" },
	{ 0x0a5, "buslock" },
	{ 0x0a6, "idle-halt" },
	{ 0x400, "npf" },
	{ 0x401, "avic_incomplete_ipi" },
	{ 0x402, "avic_unaccelerated_access" },
	{ 0x403, "vmgexit" },
	/* GHCB software exit codes a SEV-ES guest requests with VMGEXIT. */
	{ 0x80000001, "vmgexit_mmio_read" },
	{ 0x80000002, "vmgexit_mmio_write" },
	{ 0x80000003, "vmgexit_nmi_complete" },
	{ 0x80000004, "vmgexit_ap_hlt_loop" },
	{ 0x80000005, "vmgexit_ap_jump_table" },
	{ 0x80000010, "vmgexit_page_state_change" },
	{ 0x80000011, "vmgexit_guest_request" },
	{ 0x80000012, "vmgexit_ext_guest_request" },
	{ 0x80000013, "vmgexit_ap_creation" },
	{ 0x8000fffd, "vmgexit_hypervisor_feature" },
	{ 0x8000fffe, "vmgexit_termination_request" },
	{ 0x8000ffff, "vmgexit_unsupported_event" },
	/* VMEXIT_INVALID (-1), as the 32-bit field holds it. */
	{ 0xffffffff, "invalid_guest_state" },
};

static const struct arch_exit_table x86_vmx_table = {
	.isa = "vmx",
	.event = "kvm_exit",
	.field = "exit_reason",
	.mask = 0xffff,
	.n = ARRAY_SIZE(x86_vmx_reasons),
	.reasons = x86_vmx_reasons,
};

static const struct arch_exit_table x86_svm_table = {
	.isa = "svm",
	.event = "kvm_exit",
	.field = "exit_reason",
	.mask = ~0ULL,
	.n = ARRAY_SIZE(x86_svm_reasons),
	.reasons = x86_svm_reasons,
};

static const struct arch_exit_table *const x86_tables[] = {
	&x86_vmx_table,
	&x86_svm_table,
	NULL,
};

static const struct arch_source x86_exit_source = {
	.event = "kvm_exit",
	.field = "exit_reason",
};

static const struct arch_source *const x86_sources[] = {
	&x86_exit_source,
	&arch_source_userspace_exit,
	NULL,
};

/* kvm_exit's isa field: KVM_ISA_VMX and KVM_ISA_SVM of the kernel's trace.h */
static const struct arch_guard x86_guards[] = {
	{ "vmx", 1 },
	{ "svm", 2 },
	{ NULL, 0 },
};

/* Whether sysfs_root/module/<name> is a directory: the module is known. */
static bool x86_module_present(const char *sysfs_root, const char *name)
{
	char path[PATH_MAX];
	struct stat st;
	int n = snprintf(path, sizeof(path), "%s/module/%s", sysfs_root, name);

	if (n < 0 || (size_t)n >= sizeof(path))
		return false;
	return !stat(path, &st) && S_ISDIR(st.st_mode);
}

/*
 * Whether the module's initstate reads "live": a loadable module that
 * finished loading. Built-in modules have no initstate.
 */
static bool x86_module_live(const char *sysfs_root, const char *name)
{
	char path[PATH_MAX], buf[16];
	int n = snprintf(path, sizeof(path), "%s/module/%s/initstate",
			 sysfs_root, name);

	if (n < 0 || (size_t)n >= sizeof(path) ||
	    fs_read_at(AT_FDCWD, path, buf, sizeof(buf)) <= 0)
		return false;
	return !strcmp(buf, "live") || !strcmp(buf, "live\n");
}

/*
 * kvm_intel means VMX, kvm_amd SVM. Only one of them loads on a given CPU;
 * should both be there (both built in, say), the one whose initstate is
 * "live" decides, else the answer is unknown.
 */
static const char *x86_detect_isa(const char *sysfs_root)
{
	const char *root = sysfs_root ? sysfs_root : "/sys";
	bool intel = x86_module_present(root, "kvm_intel");
	bool amd = x86_module_present(root, "kvm_amd");

	if (intel && amd) {
		intel = x86_module_live(root, "kvm_intel");
		amd = x86_module_live(root, "kvm_amd");
	}
	if (intel != amd)
		return intel ? "vmx" : "svm";
	return NULL;
}

const struct arch_desc arch_x86_desc = {
	.name = "x86",
	.sources = x86_sources,
	.guard_field = "isa",
	.guards = x86_guards,
	.tables = x86_tables,
	.detect_isa = x86_detect_isa,
};
