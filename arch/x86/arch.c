// SPDX-License-Identifier: GPL-2.0-only
/*
 * The x86 descriptor. kvm_exit's exit_reason is decoded by one of two
 * tables, picked by its isa field (1 VMX, 2 SVM). The fallback names, for
 * kernels whose kvm_exit format has no table: Intel VMX basic exit reasons
 * (SDM Vol. 3, Appendix C) and AMD SVM exit codes (APM Vol. 2, Appendix C,
 * plus the GHCB software exit codes of SEV-ES guests), named the way KVM's
 * own tracepoints name them, each with kvm_stat's spelling where kvm_stat
 * knows it (SVM's "IOIO" for the kernel's "io"). The ISA is told by the
 * loaded vendor module, else the CPU vendor, never by CPU flags, which
 * nested and paravirtualised hosts do not show. Where each vendor module
 * keeps the reason kvm_exit's record copies (the BPF engine reads it
 * there, at offsets from the kernel's BTF) is named here too, and the
 * breakdowns by key (I/O ports and MSRs are x86's alone).
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
	{ 0, "EXCEPTION_NMI", "EXCEPTION_NMI" },
	{ 1, "EXTERNAL_INTERRUPT", "EXTERNAL_INTERRUPT" },
	{ 2, "TRIPLE_FAULT", "TRIPLE_FAULT" },
	{ 3, "INIT_SIGNAL", "INIT_SIGNAL" },
	{ 4, "SIPI_SIGNAL", "SIPI_SIGNAL" },
	{ 5, "IO_SMI", NULL },
	{ 6, "OTHER_SMI", NULL },
	{ 7, "INTERRUPT_WINDOW", "INTERRUPT_WINDOW" },
	{ 8, "NMI_WINDOW", "NMI_WINDOW" },
	{ 9, "TASK_SWITCH", "TASK_SWITCH" },
	{ 10, "CPUID", "CPUID" },
	{ 11, "GETSEC", NULL },
	{ 12, "HLT", "HLT" },
	{ 13, "INVD", "INVD" },
	{ 14, "INVLPG", "INVLPG" },
	{ 15, "RDPMC", "RDPMC" },
	{ 16, "RDTSC", "RDTSC" },
	{ 17, "RSM", NULL },
	{ 18, "VMCALL", "VMCALL" },
	{ 19, "VMCLEAR", "VMCLEAR" },
	{ 20, "VMLAUNCH", "VMLAUNCH" },
	{ 21, "VMPTRLD", "VMPTRLD" },
	{ 22, "VMPTRST", "VMPTRST" },
	{ 23, "VMREAD", "VMREAD" },
	{ 24, "VMRESUME", "VMRESUME" },
	{ 25, "VMWRITE", "VMWRITE" },
	{ 26, "VMOFF", "VMOFF" },
	{ 27, "VMON", "VMON" },
	{ 28, "CR_ACCESS", "CR_ACCESS" },
	{ 29, "DR_ACCESS", "DR_ACCESS" },
	{ 30, "IO_INSTRUCTION", "IO_INSTRUCTION" },
	{ 31, "MSR_READ", "MSR_READ" },
	{ 32, "MSR_WRITE", "MSR_WRITE" },
	{ 33, "INVALID_STATE", "INVALID_STATE" },
	{ 34, "MSR_LOAD_FAIL", "MSR_LOAD_FAIL" },
	{ 36, "MWAIT_INSTRUCTION", "MWAIT_INSTRUCTION" },
	{ 37, "MONITOR_TRAP_FLAG", "MONITOR_TRAP_FLAG" },
	{ 39, "MONITOR_INSTRUCTION", "MONITOR_INSTRUCTION" },
	{ 40, "PAUSE_INSTRUCTION", "PAUSE_INSTRUCTION" },
	{ 41, "MCE_DURING_VMENTRY", "MCE_DURING_VMENTRY" },
	{ 43, "TPR_BELOW_THRESHOLD", "TPR_BELOW_THRESHOLD" },
	{ 44, "APIC_ACCESS", "APIC_ACCESS" },
	{ 45, "EOI_INDUCED", "EOI_INDUCED" },
	{ 46, "GDTR_IDTR", "GDTR_IDTR" },
	{ 47, "LDTR_TR", "LDTR_TR" },
	{ 48, "EPT_VIOLATION", "EPT_VIOLATION" },
	{ 49, "EPT_MISCONFIG", "EPT_MISCONFIG" },
	{ 50, "INVEPT", "INVEPT" },
	{ 51, "RDTSCP", "RDTSCP" },
	{ 52, "PREEMPTION_TIMER", "PREEMPTION_TIMER" },
	{ 53, "INVVPID", "INVVPID" },
	{ 54, "WBINVD", "WBINVD" },
	{ 55, "XSETBV", "XSETBV" },
	{ 56, "APIC_WRITE", "APIC_WRITE" },
	{ 57, "RDRAND", "RDRAND" },
	{ 58, "INVPCID", "INVPCID" },
	{ 59, "VMFUNC", "VMFUNC" },
	{ 60, "ENCLS", "ENCLS" },
	{ 61, "RDSEED", "RDSEED" },
	{ 62, "PML_FULL", "PML_FULL" },
	{ 63, "XSAVES", "XSAVES" },
	{ 64, "XRSTORS", "XRSTORS" },
	{ 65, "PCONFIG", NULL },
	{ 66, "SPP", NULL },
	{ 67, "UMWAIT", "UMWAIT" },
	{ 68, "TPAUSE", "TPAUSE" },
	{ 69, "LOADIWKEY", NULL },
	{ 70, "ENCLV", NULL },
	{ 72, "ENQCMD_PASID_FAIL", NULL },
	{ 73, "ENQCMDS_PASID_FAIL", NULL },
	{ 74, "BUS_LOCK", "BUS_LOCK" },
	{ 75, "NOTIFY", "NOTIFY" },
	{ 76, "SEAMCALL", NULL },
	{ 77, "TDCALL", NULL },
	{ 78, "RDMSRLIST", NULL },
	{ 79, "WRMSRLIST", NULL },
	{ 80, "URDMSR", NULL },
	{ 81, "UWRMSR", NULL },
	{ 84, "MSR_READ_IMM", NULL },
	{ 85, "MSR_WRITE_IMM", NULL },
};

/* SVM exit codes (EXITCODE in the VMCB, as the tracepoint's 32-bit field). */
static const struct arch_exit_reason x86_svm_reasons[] = {
	{ 0x000, "read_cr0", "READ_CR0" },
	{ 0x001, "read_cr1", NULL },
	{ 0x002, "read_cr2", "READ_CR2" },
	{ 0x003, "read_cr3", "READ_CR3" },
	{ 0x004, "read_cr4", "READ_CR4" },
	{ 0x005, "read_cr5", NULL },
	{ 0x006, "read_cr6", NULL },
	{ 0x007, "read_cr7", NULL },
	{ 0x008, "read_cr8", "READ_CR8" },
	{ 0x009, "read_cr9", NULL },
	{ 0x00a, "read_cr10", NULL },
	{ 0x00b, "read_cr11", NULL },
	{ 0x00c, "read_cr12", NULL },
	{ 0x00d, "read_cr13", NULL },
	{ 0x00e, "read_cr14", NULL },
	{ 0x00f, "read_cr15", NULL },
	{ 0x010, "write_cr0", "WRITE_CR0" },
	{ 0x011, "write_cr1", NULL },
	{ 0x012, "write_cr2", "WRITE_CR2" },
	{ 0x013, "write_cr3", "WRITE_CR3" },
	{ 0x014, "write_cr4", "WRITE_CR4" },
	{ 0x015, "write_cr5", NULL },
	{ 0x016, "write_cr6", NULL },
	{ 0x017, "write_cr7", NULL },
	{ 0x018, "write_cr8", "WRITE_CR8" },
	{ 0x019, "write_cr9", NULL },
	{ 0x01a, "write_cr10", NULL },
	{ 0x01b, "write_cr11", NULL },
	{ 0x01c, "write_cr12", NULL },
	{ 0x01d, "write_cr13", NULL },
	{ 0x01e, "write_cr14", NULL },
	{ 0x01f, "write_cr15", NULL },
	{ 0x020, "read_dr0", "READ_DR0" },
	{ 0x021, "read_dr1", "READ_DR1" },
	{ 0x022, "read_dr2", "READ_DR2" },
	{ 0x023, "read_dr3", "READ_DR3" },
	{ 0x024, "read_dr4", "READ_DR4" },
	{ 0x025, "read_dr5", "READ_DR5" },
	{ 0x026, "read_dr6", "READ_DR6" },
	{ 0x027, "read_dr7", "READ_DR7" },
	{ 0x028, "read_dr8", NULL },
	{ 0x029, "read_dr9", NULL },
	{ 0x02a, "read_dr10", NULL },
	{ 0x02b, "read_dr11", NULL },
	{ 0x02c, "read_dr12", NULL },
	{ 0x02d, "read_dr13", NULL },
	{ 0x02e, "read_dr14", NULL },
	{ 0x02f, "read_dr15", NULL },
	{ 0x030, "write_dr0", "WRITE_DR0" },
	{ 0x031, "write_dr1", "WRITE_DR1" },
	{ 0x032, "write_dr2", "WRITE_DR2" },
	{ 0x033, "write_dr3", "WRITE_DR3" },
	{ 0x034, "write_dr4", "WRITE_DR4" },
	{ 0x035, "write_dr5", "WRITE_DR5" },
	{ 0x036, "write_dr6", "WRITE_DR6" },
	{ 0x037, "write_dr7", "WRITE_DR7" },
	{ 0x038, "write_dr8", NULL },
	{ 0x039, "write_dr9", NULL },
	{ 0x03a, "write_dr10", NULL },
	{ 0x03b, "write_dr11", NULL },
	{ 0x03c, "write_dr12", NULL },
	{ 0x03d, "write_dr13", NULL },
	{ 0x03e, "write_dr14", NULL },
	{ 0x03f, "write_dr15", NULL },
	/* 0x40 + exception vector, for the architecturally defined vectors. */
	{ 0x040, "DE excp", "EXCP_BASE" },
	{ 0x041, "DB excp", NULL },
	{ 0x043, "BP excp", NULL },
	{ 0x044, "OF excp", NULL },
	{ 0x045, "BR excp", NULL },
	{ 0x046, "UD excp", NULL },
	{ 0x047, "NM excp", NULL },
	{ 0x048, "DF excp", NULL },
	{ 0x04a, "TS excp", NULL },
	{ 0x04b, "NP excp", NULL },
	{ 0x04c, "SS excp", NULL },
	{ 0x04d, "GP excp", NULL },
	{ 0x04e, "PF excp", NULL },
	{ 0x050, "MF excp", NULL },
	{ 0x051, "AC excp", NULL },
	{ 0x052, "MC excp", NULL },
	{ 0x053, "XF excp", NULL },
	{ 0x055, "CP excp", NULL },
	{ 0x05c, "HV excp", NULL },
	{ 0x05d, "VC excp", NULL },
	{ 0x05e, "SX excp", NULL },
	{ 0x05f, "LAST_EXCP", "LAST_EXCP" },
	{ 0x060, "interrupt", "INTR" },
	{ 0x061, "nmi", "NMI" },
	{ 0x062, "smi", "SMI" },
	{ 0x063, "init", "INIT" },
	{ 0x064, "vintr", "VINTR" },
	{ 0x065, "cr0_sel_write", "CR0_SEL_WRITE" },
	{ 0x066, "read_idtr", "IDTR_READ" },
	{ 0x067, "read_gdtr", "GDTR_READ" },
	{ 0x068, "read_ldtr", "LDTR_READ" },
	{ 0x069, "read_tr", "TR_READ" },
	{ 0x06a, "write_idtr", "IDTR_WRITE" },
	{ 0x06b, "write_gdtr", "GDTR_WRITE" },
	{ 0x06c, "write_ldtr", "LDTR_WRITE" },
	{ 0x06d, "write_tr", "TR_WRITE" },
	{ 0x06e, "rdtsc", "RDTSC" },
	{ 0x06f, "rdpmc", "RDPMC" },
	{ 0x070, "pushf", "PUSHF" },
	{ 0x071, "popf", "POPF" },
	{ 0x072, "cpuid", "CPUID" },
	{ 0x073, "rsm", "RSM" },
	{ 0x074, "iret", "IRET" },
	{ 0x075, "swint", "SWINT" },
	{ 0x076, "invd", "INVD" },
	{ 0x077, "pause", "PAUSE" },
	{ 0x078, "hlt", "HLT" },
	{ 0x079, "invlpg", "INVLPG" },
	{ 0x07a, "invlpga", "INVLPGA" },
	{ 0x07b, "io", "IOIO" },
	{ 0x07c, "msr", "MSR" },
	{ 0x07d, "task_switch", "TASK_SWITCH" },
	{ 0x07e, "ferr_freeze", "FERR_FREEZE" },
	{ 0x07f, "shutdown", "SHUTDOWN" },
	{ 0x080, "vmrun", "VMRUN" },
	{ 0x081, "hypercall", "VMMCALL" },
	{ 0x082, "vmload", "VMLOAD" },
	{ 0x083, "vmsave", "VMSAVE" },
	{ 0x084, "stgi", "STGI" },
	{ 0x085, "clgi", "CLGI" },
	{ 0x086, "skinit", "SKINIT" },
	{ 0x087, "rdtscp", "RDTSCP" },
	{ 0x088, "icebp", "ICEBP" },
	{ 0x089, "wbinvd", "WBINVD" },
	{ 0x08a, "monitor", "MONITOR" },
	{ 0x08b, "mwait", "MWAIT" },
	{ 0x08c, "mwait_cond", "MWAIT_COND" },
	{ 0x08d, "xsetbv", "XSETBV" },
	{ 0x08e, "rdpru", "RDPRU" },
	{ 0x08f, "write_efer_trap", "EFER_WRITE_TRAP" },
	{ 0x090, "write_cr0_trap", "CR0_WRITE_TRAP" },
	{ 0x091, "write_cr1_trap", "CR1_WRITE_TRAP" },
	{ 0x092, "write_cr2_trap", "CR2_WRITE_TRAP" },
	{ 0x093, "write_cr3_trap", "CR3_WRITE_TRAP" },
	{ 0x094, "write_cr4_trap", "CR4_WRITE_TRAP" },
	{ 0x095, "write_cr5_trap", "CR5_WRITE_TRAP" },
	{ 0x096, "write_cr6_trap", "CR6_WRITE_TRAP" },
	{ 0x097, "write_cr7_trap", "CR7_WRITE_TRAP" },
	{ 0x098, "write_cr8_trap", "CR8_WRITE_TRAP" },
	{ 0x099, "write_cr9_trap", "CR9_WRITE_TRAP" },
	{ 0x09a, "write_cr10_trap", "CR10_WRITE_TRAP" },
	{ 0x09b, "write_cr11_trap", "CR11_WRITE_TRAP" },
	{ 0x09c, "write_cr12_trap", "CR12_WRITE_TRAP" },
	{ 0x09d, "write_cr13_trap", "CR13_WRITE_TRAP" },
	{ 0x09e, "write_cr14_trap", "CR14_WRITE_TRAP" },
	{ 0x09f, "write_cr15_trap", "CR15_WRITE_TRAP" },
	{ 0x0a0, "invlpgb", NULL },
	{ 0x0a1, "invlpgb_illegal", NULL },
	{ 0x0a2, "invpcid", "INVPCID" },
	{ 0x0a3, "mcommit", NULL },
	{ 0x0a4, "tlbsync", NULL },
	{ 0x0a5, "buslock", NULL },
	{ 0x0a6, "idle-halt", NULL },
	{ 0x400, "npf", "NPF" },
	{ 0x401, "avic_incomplete_ipi", "AVIC_INCOMPLETE_IPI" },
	{ 0x402, "avic_unaccelerated_access", "AVIC_UNACCELERATED_ACCESS" },
	{ 0x403, "vmgexit", "VMGEXIT" },
	/* GHCB software exit codes a SEV-ES guest requests with VMGEXIT. */
	{ 0x80000001, "vmgexit_mmio_read", NULL },
	{ 0x80000002, "vmgexit_mmio_write", NULL },
	{ 0x80000003, "vmgexit_nmi_complete", NULL },
	{ 0x80000004, "vmgexit_ap_hlt_loop", NULL },
	{ 0x80000005, "vmgexit_ap_jump_table", NULL },
	{ 0x80000010, "vmgexit_page_state_change", NULL },
	{ 0x80000011, "vmgexit_guest_request", NULL },
	{ 0x80000012, "vmgexit_ext_guest_request", NULL },
	{ 0x80000013, "vmgexit_ap_creation", NULL },
	{ 0x8000fffd, "vmgexit_hypervisor_feature", NULL },
	{ 0x8000fffe, "vmgexit_termination_request", NULL },
	{ 0x8000ffff, "vmgexit_unsupported_event", NULL },
	/* VMEXIT_INVALID (-1), as the 32-bit field holds it. */
	{ 0xffffffff, "invalid_guest_state", NULL },
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

/*
 * kvm_exit(vcpu, isa): the reason its record copies, as the vendor's
 * get_exit_info reads it: svm_get_exit_info the exit code of the VMCB in
 * use (vmcb02 while a nested guest runs), vmx_get_exit_info the exit
 * reason it saved from the VMCS (a union since Linux 5.11, a plain u32
 * before, in struct vcpu_vt since 6.16, which TDX's vCPUs share).
 */
static const struct arch_vcpu_reason x86_vcpu_reasons[] = {
	{
		.isa = "svm",
		.event = "kvm_exit",
		.module = "kvm_amd",
		.container = "vcpu_svm",
		.vcpu = "vcpu",
		.pointer = "vmcb",
		.paths = { "control.exit_code" },
	},
	{
		.isa = "vmx",
		.event = "kvm_exit",
		.module = "kvm_intel",
		.container = "vcpu_vmx",
		.vcpu = "vcpu",
		.paths = { "exit_reason.full", "vt.exit_reason.full",
			   "exit_reason" },
	},
	{ .isa = NULL },
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

/*
 * Without a vendor module (a paravirtual KVM such as kvm_pvm, a module not
 * loaded yet), the CPU vendor: Intel and Zhaoxin/Centaur CPUs have VMX,
 * AMD and Hygon ones SVM.
 */
static const char *x86_vendor_isa(const char *vendor_id)
{
	static const struct {
		const char *vendor, *isa;
	} vendors[] = {
		{ "GenuineIntel", "vmx" }, { "CentaurHauls", "vmx" },
		{ "Shanghai", "vmx" },	   { "AuthenticAMD", "svm" },
		{ "HygonGenuine", "svm" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(vendors); i++)
		if (!strcmp(vendor_id, vendors[i].vendor))
			return vendors[i].isa;
	return NULL;
}

/*
 * Names of I/O ports: the PC's standard devices and QEMU's. The ACPI PM
 * block sits where the firmware puts it: SeaBIOS at 0xb000 on both
 * machines, OVMF at 0x600 on q35 (0xb000 on i440fx); its timer is at +8.
 */
static const struct arch_key_name x86_ioports[] = {
	{ 0x20, 0x21, "PIC1", false },
	{ 0x40, 0x43, "PIT", false },
	{ 0x60, 0x60, "KBD_DATA", false },
	{ 0x61, 0x61, "PORT_B", false },
	{ 0x64, 0x64, "KBD_CMD", false },
	{ 0x70, 0x70, "CMOS_INDEX", false },
	{ 0x71, 0x71, "CMOS_DATA", false },
	{ 0x80, 0x80, "POST", false },
	{ 0x92, 0x92, "A20", false },
	{ 0xa0, 0xa1, "PIC2", false },
	{ 0xb2, 0xb3, "APM", false },
	{ 0x170, 0x177, "IDE1", false },
	{ 0x1f0, 0x1f7, "IDE0", false },
	{ 0x2e8, 0x2ef, "COM4", false },
	{ 0x2f8, 0x2ff, "COM2", false },
	{ 0x378, 0x37f, "LPT1", false },
	{ 0x3b0, 0x3df, "VGA", false },
	{ 0x3e8, 0x3ef, "COM3", false },
	{ 0x3f6, 0x3f6, "IDE0_CTL", false },
	{ 0x3f8, 0x3ff, "COM1", false },
	{ 0x402, 0x402, "DEBUGCON", false },
	{ 0x4d0, 0x4d1, "ELCR", false },
	{ 0x510, 0x510, "FW_CFG_SEL", false },
	{ 0x511, 0x511, "FW_CFG_DATA", false },
	{ 0x514, 0x51b, "FW_CFG_DMA", false },
	{ 0x600, 0x607, "ACPI_PM1", false },
	{ 0x608, 0x60b, "ACPI_PM_TMR", false },
	{ 0x620, 0x62f, "ACPI_GPE0", false },
	{ 0xafe0, 0xafe3, "ACPI_GPE0", false },
	{ 0xb000, 0xb007, "ACPI_PM1", false },
	{ 0xb008, 0xb00b, "ACPI_PM_TMR", false },
	{ 0xcf8, 0xcf8, "PCI_CONFIG_ADDRESS", false },
	{ 0xcf9, 0xcf9, "RESET_CONTROL", false },
	{ 0xcfa, 0xcfb, "PCI_CONFIG_ADDRESS", false },
	{ 0xcfc, 0xcff, "PCI_CONFIG_DATA", false },
};

/* Names of MSRs (Intel SDM vol. 4 and AMD APM vol. 2 spellings, without
 * IA32_/MSR_), KVM's paravirtual ones and the x2APIC registers. */
static const struct arch_key_name x86_msrs[] = {
	{ 0x10, 0x10, "TSC", false },
	{ 0x11, 0x11, "KVM_WALL_CLOCK", false },
	{ 0x12, 0x12, "KVM_SYSTEM_TIME", false },
	{ 0x1b, 0x1b, "APIC_BASE", false },
	{ 0x3a, 0x3a, "FEATURE_CONTROL", false },
	{ 0x3b, 0x3b, "TSC_ADJUST", false },
	{ 0x48, 0x48, "SPEC_CTRL", false },
	{ 0x49, 0x49, "PRED_CMD", false },
	{ 0x8b, 0x8b, "BIOS_SIGN_ID", false },
	{ 0xc1, 0xc8, "PMC", true },
	{ 0xe7, 0xe7, "MPERF", false },
	{ 0xe8, 0xe8, "APERF", false },
	{ 0xfe, 0xfe, "MTRRCAP", false },
	{ 0x10a, 0x10a, "ARCH_CAPABILITIES", false },
	{ 0x10b, 0x10b, "FLUSH_CMD", false },
	{ 0x174, 0x174, "SYSENTER_CS", false },
	{ 0x175, 0x175, "SYSENTER_ESP", false },
	{ 0x176, 0x176, "SYSENTER_EIP", false },
	{ 0x179, 0x179, "MCG_CAP", false },
	{ 0x17a, 0x17a, "MCG_STATUS", false },
	{ 0x186, 0x18d, "PERFEVTSEL", true },
	{ 0x1a0, 0x1a0, "MISC_ENABLE", false },
	{ 0x1d9, 0x1d9, "DEBUGCTL", false },
	{ 0x200, 0x20f, "MTRR_PHYS", true },
	{ 0x250, 0x26f, "MTRR_FIX", true },
	{ 0x277, 0x277, "PAT", false },
	{ 0x2ff, 0x2ff, "MTRR_DEF_TYPE", false },
	{ 0x309, 0x30b, "FIXED_CTR", true },
	{ 0x345, 0x345, "PERF_CAPABILITIES", false },
	{ 0x38d, 0x38d, "FIXED_CTR_CTRL", false },
	{ 0x38e, 0x38e, "PERF_GLOBAL_STATUS", false },
	{ 0x38f, 0x38f, "PERF_GLOBAL_CTRL", false },
	{ 0x390, 0x390, "PERF_GLOBAL_OVF_CTRL", false },
	{ 0x4c1, 0x4c8, "A_PMC", true },
	{ 0x6e0, 0x6e0, "TSC_DEADLINE", false },
	{ 0x802, 0x802, "X2APIC_ID", false },
	{ 0x803, 0x803, "X2APIC_VERSION", false },
	{ 0x808, 0x808, "X2APIC_TPR", false },
	{ 0x80a, 0x80a, "X2APIC_PPR", false },
	{ 0x80b, 0x80b, "X2APIC_EOI", false },
	{ 0x80d, 0x80d, "X2APIC_LDR", false },
	{ 0x80f, 0x80f, "X2APIC_SVR", false },
	{ 0x810, 0x817, "X2APIC_ISR", true },
	{ 0x818, 0x81f, "X2APIC_TMR", true },
	{ 0x820, 0x827, "X2APIC_IRR", true },
	{ 0x828, 0x828, "X2APIC_ESR", false },
	{ 0x82f, 0x82f, "X2APIC_LVT_CMCI", false },
	{ 0x830, 0x830, "X2APIC_ICR", false },
	{ 0x832, 0x832, "X2APIC_LVT_TIMER", false },
	{ 0x833, 0x833, "X2APIC_LVT_THERMAL", false },
	{ 0x834, 0x834, "X2APIC_LVT_PMI", false },
	{ 0x835, 0x835, "X2APIC_LVT_LINT0", false },
	{ 0x836, 0x836, "X2APIC_LVT_LINT1", false },
	{ 0x837, 0x837, "X2APIC_LVT_ERROR", false },
	{ 0x838, 0x838, "X2APIC_TMICT", false },
	{ 0x839, 0x839, "X2APIC_TMCCT", false },
	{ 0x83e, 0x83e, "X2APIC_TDCR", false },
	{ 0x83f, 0x83f, "X2APIC_SELF_IPI", false },
	{ 0x800, 0x8ff, "X2APIC", false },
	{ 0x4b564d00, 0x4b564d00, "KVM_WALL_CLOCK_NEW", false },
	{ 0x4b564d01, 0x4b564d01, "KVM_SYSTEM_TIME_NEW", false },
	{ 0x4b564d02, 0x4b564d02, "KVM_ASYNC_PF_EN", false },
	{ 0x4b564d03, 0x4b564d03, "KVM_STEAL_TIME", false },
	{ 0x4b564d04, 0x4b564d04, "KVM_PV_EOI_EN", false },
	{ 0x4b564d05, 0x4b564d05, "KVM_POLL_CONTROL", false },
	{ 0x4b564d06, 0x4b564d06, "KVM_ASYNC_PF_INT", false },
	{ 0x4b564d07, 0x4b564d07, "KVM_ASYNC_PF_ACK", false },
	{ 0xc0000080, 0xc0000080, "EFER", false },
	{ 0xc0000081, 0xc0000081, "STAR", false },
	{ 0xc0000082, 0xc0000082, "LSTAR", false },
	{ 0xc0000083, 0xc0000083, "CSTAR", false },
	{ 0xc0000084, 0xc0000084, "SYSCALL_MASK", false },
	{ 0xc0000100, 0xc0000100, "FS_BASE", false },
	{ 0xc0000101, 0xc0000101, "GS_BASE", false },
	{ 0xc0000102, 0xc0000102, "KERNEL_GS_BASE", false },
	{ 0xc0000103, 0xc0000103, "TSC_AUX", false },
	{ 0xc0010000, 0xc0010003, "K7_EVNTSEL", true },
	{ 0xc0010004, 0xc0010007, "K7_PERFCTR", true },
	{ 0xc0010200, 0xc001020b, "F15H_PERF", true },
};

/*
 * The breakdowns, from x86's tracepoints (arch/x86/kvm/trace.h), whose
 * records keep their arguments in order: kvm_pio(rw, port, size, count,
 * data), kvm_msr(write, ecx, data, exception), kvm_hypercall(nr, a0, a1,
 * a2, a3); and the generic kvm_mmio(type, len, gpa, val).
 */
static const struct arch_breakdown x86_breakdowns[] = {
	{
		.kind = "ioport",
		.event = "kvm_pio",
		.key = "port",
		.dir = "rw",
		.key_arg = 1,
		.dir_arg = 0,
		.names = x86_ioports,
		.nnames = ARRAY_SIZE(x86_ioports),
	},
	ARCH_BREAKDOWN_KVM_MMIO,
	{
		.kind = "msr",
		.event = "kvm_msr",
		.key = "ecx",
		.dir = "write",
		.key_arg = 1,
		.dir_arg = 0,
		.names = x86_msrs,
		.nnames = ARRAY_SIZE(x86_msrs),
	},
	{
		.kind = "hypercall",
		.event = "kvm_hypercall",
		.key = "nr",
		.key_arg = 0,
	},
	{ .kind = NULL },
};

const struct arch_desc arch_x86_desc = {
	.name = "x86",
	.sources = x86_sources,
	.guard_field = "isa",
	.guards = x86_guards,
	.tables = x86_tables,
	.vcpu_reasons = x86_vcpu_reasons,
	.detect_isa = x86_detect_isa,
	.vendor_isa = x86_vendor_isa,
	.breakdowns = x86_breakdowns,
	/* x86-64's struct pt_regs: r15, r14, r13, r12, bp, bx, r11, r10,
	 * r9, r8, ax, cx, dx, then si, the second argument */
	.syscall_arg1_off = 13 * 8,
};
