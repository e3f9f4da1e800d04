// SPDX-License-Identifier: GPL-2.0
/*
 * Kite core: recovery from a fatal device error. The admin interrupt
 * learns of the error (KITE_EVT_DEV_FATAL) and queues a work item, which
 * reports it to the devlink health reporter "fw_fatal" (kite_devlink.c).
 * The reporter's recover callback, kite_health_recover(), takes the
 * function down as remove does (the RDMA auxiliary device first, so that
 * kite_ib disassociates its users, who have seen IB_EVENT_DEVICE_FATAL),
 * resets it and brings it up again as probe does, with a new net_device
 * and a new auxiliary device.
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <linux/jiffies.h>
#include <linux/ktime.h>
#include <net/devlink.h>

#include "kite.h"

static bool kite_recovered_recently(const struct kite_dev *kdev)
{
	return kdev->recoveries &&
	       time_before(jiffies, kdev->recovered_at +
			   msecs_to_jiffies(KITE_RECOVER_MIN_INTERVAL_MS));
}

/**
 * kite_health_recover() - reset the function and bring it up again
 * @kdev: device
 * @automatic: called for a fatal event rather than by a user's
 *	       "devlink health recover"
 * @extack: where to say why not, or NULL
 *
 * An automatic recovery within KITE_RECOVER_MIN_INTERVAL_MS of the last
 * one is refused: a device that keeps failing is not reset in a loop,
 * whatever the reporter's grace period says. A user may recover at any
 * time, also a function that a failed recovery left stopped; never one
 * that did not confirm its reset (its rings may still be written).
 *
 * Context: process; takes @kdev->state_lock.
 * Return: 0 when the function is up again, else a negative errno.
 */
int kite_health_recover(struct kite_dev *kdev, bool automatic,
			struct netlink_ext_ack *extack)
{
	struct device *dev = &kdev->pdev->dev;
	ktime_t start = ktime_get();
	int err;

	mutex_lock(&kdev->state_lock);
	if (kdev->removing) {
		NL_SET_ERR_MSG_MOD(extack, "the device is being removed");
		err = -ENODEV;
		goto out;
	}
	if (automatic && kite_recovered_recently(kdev)) {
		dev_err(dev, "fatal error again within %u ms of a recovery: the device stays down\n",
			KITE_RECOVER_MIN_INTERVAL_MS);
		err = -EBUSY;
		goto out;
	}
	if (kdev->wedged) {
		NL_SET_ERR_MSG_MOD(extack, "the device did not reset: it cannot be started again");
		err = -EIO;
		goto out;
	}
	dev_warn(dev, "recovering from a fatal error: resetting the function\n");
	if (kdev->started) {
		kdev->started = false;
		err = kite_dev_stop(kdev);
		if (err) {
			kdev->wedged = true;
			dev_err(dev, "recovery failed: the device did not reset\n");
			goto out;
		}
	}
	err = kite_dev_start(kdev);
	if (err) {
		dev_err(dev, "recovery failed: %d; the device stays down\n",
			err);
		goto out;
	}
	kdev->started = true;
	kdev->recoveries++;
	kdev->recovered_at = jiffies;
	dev_info(dev, "recovered from a fatal error in %lld ms (%u so far), %s, %s\n",
		 ktime_ms_delta(ktime_get(), start), kdev->recoveries,
		 netdev_name(kdev->netdev),
		 dev_name(&kdev->rdma_adev->adev.dev));
out:
	mutex_unlock(&kdev->state_lock);
	return err;
}

static void kite_recover_work(struct work_struct *work)
{
	struct kite_dev *kdev = container_of(work, struct kite_dev,
					     recover_work);
	struct device *dev = &kdev->pdev->dev;
	unsigned int recoveries;
	bool go;
	int err;

	/* The devlink instance is registered from before the function first
	 * starts until after removing is set: reporting to it is safe here.
	 */
	mutex_lock(&kdev->state_lock);
	go = kdev->started && !kdev->removing;
	recoveries = kdev->recoveries;
	mutex_unlock(&kdev->state_lock);
	if (!go)
		return;

	/* Counts the error; with auto-recover on (the default) devlink calls
	 * kite_health_recover() unless the last recovery is younger than the
	 * grace period or the last error was never recovered.
	 */
	err = devlink_health_report(kdev->fw_fatal, "fatal device error", kdev);
	if (err == -ECANCELED)
		dev_err(dev, "fatal error within the reporter's grace period or before the last one was recovered: the device stays down\n");
	else if (!err && READ_ONCE(kdev->recoveries) == recoveries)
		dev_err(dev, "devlink auto-recover is off: the device stays down until 'devlink health recover'\n");
}

/**
 * kite_health_init() - prepare a new device's recovery
 * @kdev: device being probed
 */
void kite_health_init(struct kite_dev *kdev)
{
	mutex_init(&kdev->state_lock);
	INIT_WORK(&kdev->recover_work, kite_recover_work);
}

/**
 * kite_health_fatal() - the device reported a fatal error: recover it
 * @kdev: device; its admin queue is dead already
 * @code: the event's KITE_FATAL_* code
 *
 * Runs in the admin interrupt handler: the report and the recovery sleep
 * and run from a workqueue.
 */
void kite_health_fatal(struct kite_dev *kdev, u32 code)
{
	WRITE_ONCE(kdev->last_fatal_code, code);
	if (!READ_ONCE(kdev->removing))
		queue_work(system_long_wq, &kdev->recover_work);
}

/**
 * kite_health_stop() - no more recovery: the device is going away
 * @kdev: device
 *
 * Waits for a recovery that is running. The caller frees the admin
 * interrupt and then calls kite_health_sync().
 */
void kite_health_stop(struct kite_dev *kdev)
{
	mutex_lock(&kdev->state_lock);
	WRITE_ONCE(kdev->removing, true);
	mutex_unlock(&kdev->state_lock);
	cancel_work_sync(&kdev->recover_work);
}

/**
 * kite_health_sync() - drop a recovery queued after kite_health_stop()
 * @kdev: device whose admin interrupt is freed
 *
 * Such a recovery does nothing (@kdev->removing is set), but it must not
 * run once @kdev is freed.
 */
void kite_health_sync(struct kite_dev *kdev)
{
	cancel_work_sync(&kdev->recover_work);
	mutex_destroy(&kdev->state_lock);
}
