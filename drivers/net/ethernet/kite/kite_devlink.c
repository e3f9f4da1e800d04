// SPDX-License-Identifier: GPL-2.0
/*
 * Kite core: the devlink instance of the PCI function ("devlink dev info":
 * driver, serial number, versions) and its health reporter "fw_fatal" for
 * the device's fatal error, whose recover callback is the recovery by
 * reset of kite_health.c. The instance lives as long as the PCI function
 * is bound: a recovery replaces the net_device and the auxiliary device,
 * not the devlink instance.
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <linux/pci.h>
#include <linux/kite/compat.h>
#include <net/devlink.h>

#include "kite.h"

static int kite_devlink_info_get(struct devlink *devlink,
				 struct devlink_info_req *req,
				 struct netlink_ext_ack *extack)
{
	struct kite_dev *kdev = devlink_priv(devlink);
	struct pci_dev *pdev = kdev->pdev;
	char buf[32];
	u32 abi = 0;
	bool up;
	u64 dsn;
	int err;

	err = kite_devlink_info_driver_name_put(req, KITE_DRV_NAME);
	if (err)
		return err;
	/* The PCIe Device Serial Number capability, when the device has one. */
	dsn = pci_get_dsn(pdev);
	if (dsn) {
		snprintf(buf, sizeof(buf), "%016llx", dsn);
		err = devlink_info_serial_number_put(req, buf);
		if (err)
			return err;
	}
	/* The PCI function's identity, from its configuration space. */
	snprintf(buf, sizeof(buf), "%04x", pdev->device);
	err = devlink_info_version_fixed_put(req,
					     DEVLINK_INFO_VERSION_GENERIC_ASIC_ID,
					     buf);
	if (err)
		return err;
	snprintf(buf, sizeof(buf), "%u", pdev->revision);
	err = devlink_info_version_fixed_put(req,
					     DEVLINK_INFO_VERSION_GENERIC_ASIC_REV,
					     buf);
	if (err)
		return err;

	/* What QUERY_DEVICE reported when the function last started; a
	 * stopped function (failed recovery) reports no running versions.
	 */
	mutex_lock(&kdev->state_lock);
	up = kdev->started;
	if (up) {
		kite_fw_version_str(kdev, buf, sizeof(buf));
		abi = kdev->caps.abi_version;
	}
	mutex_unlock(&kdev->state_lock);
	if (!up)
		return 0;
	err = devlink_info_version_running_put(req,
					       DEVLINK_INFO_VERSION_GENERIC_FW,
					       buf);
	if (err)
		return err;
	snprintf(buf, sizeof(buf), "%u.%u", KITE_ABI_VER_MAJOR(abi),
		 KITE_ABI_VER_MINOR(abi));
	return devlink_info_version_running_put(req, "abi", buf);
}

static const struct devlink_ops kite_devlink_ops = {
	.info_get = kite_devlink_info_get,
};

static int kite_fw_fatal_recover(struct devlink_health_reporter *reporter,
				 void *priv_ctx,
				 struct netlink_ext_ack *extack)
{
	struct kite_dev *kdev = devlink_health_reporter_priv(reporter);

	/* priv_ctx is set by the report of a fatal event, NULL when a user
	 * asks with "devlink health recover".
	 */
	return kite_health_recover(kdev, !!priv_ctx, extack);
}

static const char *kite_dev_state(struct kite_dev *kdev)
{
	if (!kdev->started)
		return kdev->wedged ? "stopped, not reset" : "stopped";
	return kite_admin_is_dead(&kdev->admin) ? "dead" : "running";
}

static int kite_fw_fatal_diagnose(struct devlink_health_reporter *reporter,
				  struct devlink_fmsg *fmsg,
				  struct netlink_ext_ack *extack)
{
	struct kite_dev *kdev = devlink_health_reporter_priv(reporter);
	u32 status, code, last, recoveries;
	const char *state;
	int err;

	mutex_lock(&kdev->state_lock);
	state = kite_dev_state(kdev);
	recoveries = kdev->recoveries;
	mutex_unlock(&kdev->state_lock);
	status = kite_rd32(kdev, KITE_REG_DEV_STATUS);
	code = status & KITE_STATUS_FATAL ?
	       kite_rd32(kdev, KITE_REG_FATAL_CODE) : 0;
	last = READ_ONCE(kdev->last_fatal_code);

	err = kite_fmsg(devlink_fmsg_string_pair_put(fmsg, "state", state));
	err = err ?: kite_fmsg(devlink_fmsg_u32_pair_put(fmsg, "status",
							 status));
	err = err ?: kite_fmsg(devlink_fmsg_u32_pair_put(fmsg, "fatal_code",
							 code));
	err = err ?: kite_fmsg(devlink_fmsg_u32_pair_put(fmsg,
							 "last_fatal_code",
							 last));
	err = err ?: kite_fmsg(devlink_fmsg_u32_pair_put(fmsg, "recoveries",
							 recoveries));
	return err;
}

static const struct devlink_health_reporter_ops kite_fw_fatal_ops = {
	.name = "fw_fatal",
	.recover = kite_fw_fatal_recover,
	.diagnose = kite_fw_fatal_diagnose,
};

/**
 * kite_devlink_alloc() - the devlink instance, with struct kite_dev inside
 * @dev: the PCI function
 *
 * Return: the zeroed device, freed with kite_devlink_free(); or NULL.
 */
struct kite_dev *kite_devlink_alloc(struct device *dev)
{
	struct devlink *devlink;

	devlink = devlink_alloc(&kite_devlink_ops, sizeof(struct kite_dev),
				dev);
	return devlink ? devlink_priv(devlink) : NULL;
}

/**
 * kite_devlink_free() - free the device and its devlink instance
 * @kdev: device from kite_devlink_alloc(), not registered
 */
void kite_devlink_free(struct kite_dev *kdev)
{
	devlink_free(priv_to_devlink(kdev));
}

/**
 * kite_devlink_register() - create the health reporter, register devlink
 * @kdev: device whose state lock and recovery work are set up; the
 *	  function need not be started yet
 *
 * Return: 0 or a negative errno.
 */
int kite_devlink_register(struct kite_dev *kdev)
{
	struct devlink *devlink = priv_to_devlink(kdev);
	struct devlink_health_reporter *rep;

	rep = devlink_health_reporter_create(devlink, &kite_fw_fatal_ops,
					     KITE_RECOVER_MIN_INTERVAL_MS,
					     kdev);
	if (IS_ERR(rep))
		return PTR_ERR(rep);
	kdev->fw_fatal = rep;
	devlink_register(devlink);
	return 0;
}

/**
 * kite_devlink_unregister() - unregister devlink, destroy the reporter
 * @kdev: device; no fatal error is reported any more (kite_health_stop())
 *
 * Waits for the devlink commands in progress.
 */
void kite_devlink_unregister(struct kite_dev *kdev)
{
	devlink_unregister(priv_to_devlink(kdev));
	devlink_health_reporter_destroy(kdev->fw_fatal);
	kdev->fw_fatal = NULL;
}
