// SPDX-License-Identifier: GPL-2.0-only
/*
 * The statsfd provider's notices (statsfd_int.h): gathered one after the
 * other while a refresh runs and handed to main at its end, and the fix
 * for a VM whose fds are not ours to copy.
 */
#include <errno.h>
#include <stdarg.h>

#include "errmsg.h"
#include "provider.h"
#include "statsfd_int.h"

/* Appends one notice to d->note ("; " between them). */
void sfd_note_add(struct sfd_priv *d, const char *fmt, ...)
{
	va_list ap;

	if (errmsg_isset(&d->note))
		errmsg_add(&d->note, "; ");
	va_start(ap, fmt);
	errmsg_vadd(&d->note, fmt, ap);
	va_end(ap);
}

/* Hands the gathered notices to main, after any not shown yet. */
void sfd_note_flush(struct provider *p)
{
	struct sfd_priv *d = p->priv;

	if (!errmsg_isset(&d->note))
		return;
	if (p->notice && errmsg_isset(&p->msg))
		errmsg_add(&p->msg, "; %s", d->note.text);
	else
		provider_msg(p, true, "%s", d->note.text);
	errmsg_clear(&d->note);
}

/* Whether err is a permission error (-EPERM, -EACCES). */
bool sfd_denied_errno(int err)
{
	return err == -EPERM || err == -EACCES;
}

/* The fix for a permission error on a VM process's fds. */
const char sfd_perm_hint[] =
	"kvmstat needs CAP_SYS_PTRACE over the VM process (root, and ptrace access under Yama and LSM rules) and read access to /proc/PID/fd";
