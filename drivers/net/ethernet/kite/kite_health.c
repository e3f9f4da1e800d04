// SPDX-License-Identifier: GPL-2.0
/*
 * Kite core: recovery from a fatal device error. The admin interrupt
 * learns of the error (KITE_EVT_DEV_FATAL) and queues a work item, which
 * takes the function down as remove does (the RDMA auxiliary device first,
 * so that kite_ib disassociates its users, who have seen
 * IB_EVENT_DEVICE_FATAL), resets it and brings it up again as probe does,
 * with a new net_device and a new auxiliary device.
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <linux/jiffies.h>
#include <linux/ktime.h>

#include "kite.h"

/* A device that fails again this soon after a recovery stays down. */
#define KITE_RECOVER_MIN_INTERVAL_MS	10000U

static bool kite_recovered_recently(const struct kite_dev *kdev)
{
	return kdev->recoveries &&
	       time_before(jiffies, kdev->recovered_at +
			   msecs_to_jiffies(KITE_RECOVER_MIN_INTERVAL_MS));
}

static void kite_recover_work(struct work_struct *work)
{
	struct kite_dev *kdev = container_of(work, struct kite_dev,
					     recover_work);
	struct device *dev = &kdev->pdev->dev;
	ktime_t start = ktime_get();
	int err;

	mutex_lock(&kdev->state_lock);
	if (kdev->removing || !kdev->started)
		goto out;
	if (kite_recovered_recently(kdev)) {
		dev_err(dev, "fatal error again within %u ms of a recovery: the device stays down\n",
			KITE_RECOVER_MIN_INTERVAL_MS);
		goto out;
	}
	dev_warn(dev, "recovering from a fatal error: resetting the function\n");
	kdev->started = false;
	err = kite_dev_stop(kdev);
	if (err) {
		dev_err(dev, "recovery failed: the device did not reset\n");
		goto out;
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
 *
 * Runs in the admin interrupt handler: the recovery itself sleeps and runs
 * from a workqueue.
 */
void kite_health_fatal(struct kite_dev *kdev)
{
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
