// SPDX-License-Identifier: GPL-2.0
/*
 * Kite RDMA driver: the auxiliary driver of "kite.rdma" devices. Probe
 * registers the ib_device over the core driver's device and this driver
 * as the device's event client, which routes completions, CQ and QP
 * events, link and fatal events to the verbs objects and ib_core.
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <linux/module.h>

#include "kite_ib.h"
#include "kite_verbs.h"

MODULE_AUTHOR("The Kite authors");
MODULE_DESCRIPTION("Kite RoCEv2 NIC RDMA driver");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(KITE);

static struct kite_ib_dev *kite_ib_of(struct kite_event_client *client)
{
	return container_of(client, struct kite_ib_dev, events);
}

static void kite_ib_completion(struct kite_event_client *client, u32 cqn)
{
	kite_cq_comp_event(kite_ib_of(client), cqn);
}

static void kite_ib_async(struct kite_event_client *client, u8 type,
			  u32 data)
{
	struct kite_ib_dev *kib = kite_ib_of(client);

	if (type == KITE_EVT_CQ_ERR)
		kite_cq_async_event(kib, data);
	else if (type == KITE_EVT_SRQ_LIMIT || type == KITE_EVT_SRQ_ERR)
		kite_srq_async_event(kib, data, type);
	else
		kite_qp_async_event(kib, data, type);
}

static void kite_ib_port(struct kite_event_client *client, bool up)
{
	kite_ib_port_event(kite_ib_of(client), up ? IB_EVENT_PORT_ACTIVE :
						    IB_EVENT_PORT_ERR);
}

static void kite_ib_fatal(struct kite_event_client *client)
{
	struct kite_ib_dev *kib = kite_ib_of(client);

	kite_ib_port_event(kib, IB_EVENT_DEVICE_FATAL);
	/* Kernel consumers poll and get their WQEs back as flushed. */
	kite_cqs_fatal(kib);
}

static const struct kite_event_ops kite_ib_event_ops = {
	.completion = kite_ib_completion,
	.async = kite_ib_async,
	.port = kite_ib_port,
	.fatal = kite_ib_fatal,
};

/*
 * The event client comes first and goes last: ib_core creates CQs and QPs
 * while the ib_device registers (the MAD layer's QP1) and drains them while
 * it unregisters, and none of their events may be lost.
 */
static int kite_ib_probe(struct auxiliary_device *adev,
			 const struct auxiliary_device_id *id)
{
	struct kite_dev *kdev = kite_adev_to_kdev(adev);
	struct kite_ib_dev *kib;
	int err;

	kib = ib_alloc_device(kite_ib_dev, ibdev);
	if (!kib)
		return -ENOMEM;
	kib->kdev = kdev;
	kib->adev = adev;
	kib->events.ops = &kite_ib_event_ops;
	spin_lock_init(&kib->port_lock);
	xa_init(&kib->cqs);
	xa_init(&kib->qps);
	xa_init(&kib->srqs);
	mutex_init(&kib->cnt_lock);
	xa_init_flags(&kib->counters, XA_FLAGS_ALLOC1);
	auxiliary_set_drvdata(adev, kib);

	err = kite_register_event_client(kdev, &kib->events);
	if (err)
		goto err_dealloc;
	err = kite_ib_register(kib);
	if (err)
		goto err_unregister_events;
	kite_ib_debugfs_add(kib);
	ibdev_info(&kib->ibdev, "RDMA device of %s on %s\n", dev_name(&adev->dev),
		   netdev_name(kdev->netdev));
	return 0;

err_unregister_events:
	kite_unregister_event_client(kdev, &kib->events);
err_dealloc:
	auxiliary_set_drvdata(adev, NULL);
	xa_destroy(&kib->counters);
	mutex_destroy(&kib->cnt_lock);
	xa_destroy(&kib->srqs);
	xa_destroy(&kib->qps);
	xa_destroy(&kib->cqs);
	ib_dealloc_device(&kib->ibdev);
	return err;
}

static void kite_ib_remove(struct auxiliary_device *adev)
{
	struct kite_ib_dev *kib = auxiliary_get_drvdata(adev);

	kite_ib_debugfs_del(kib);
	kite_ib_unregister(kib);
	kite_unregister_event_client(kib->kdev, &kib->events);
	auxiliary_set_drvdata(adev, NULL);
	xa_destroy(&kib->counters);
	mutex_destroy(&kib->cnt_lock);
	xa_destroy(&kib->srqs);
	xa_destroy(&kib->qps);
	xa_destroy(&kib->cqs);
	ib_dealloc_device(&kib->ibdev);
}

static const struct auxiliary_device_id kite_ib_id_table[] = {
	{ .name = KITE_DRV_NAME "." KITE_ADEV_NAME_RDMA },
	{ }
};
MODULE_DEVICE_TABLE(auxiliary, kite_ib_id_table);

static struct auxiliary_driver kite_ib_driver = {
	.name = KITE_ADEV_NAME_RDMA,
	.probe = kite_ib_probe,
	.remove = kite_ib_remove,
	.id_table = kite_ib_id_table,
};

#if IS_ENABLED(CONFIG_INFINIBAND_KITE_KUNIT_TEST)

static int kite_ib_match_any(struct device *dev, const void *data)
{
	return 1;
}

/**
 * kite_ib_dev_get_any() - find a bound Kite RDMA device (for KUnit suites)
 *
 * The device is locked against unbinding until kite_ib_dev_put().
 *
 * Return: the device, or NULL when none is bound to this driver.
 */
struct kite_ib_dev *kite_ib_dev_get_any(void)
{
	struct kite_ib_dev *kib;
	struct device *dev;

	dev = driver_find_device(&kite_ib_driver.driver, NULL, NULL,
				 kite_ib_match_any);
	if (!dev)
		return NULL;
	device_lock(dev);
	kib = dev->driver == &kite_ib_driver.driver ?
	      auxiliary_get_drvdata(to_auxiliary_dev(dev)) : NULL;
	if (!kib) {
		device_unlock(dev);
		put_device(dev);
	}
	return kib;
}

/**
 * kite_ib_dev_put() - release a device from kite_ib_dev_get_any()
 * @kib: device
 */
void kite_ib_dev_put(struct kite_ib_dev *kib)
{
	struct device *dev = &kib->adev->dev;

	device_unlock(dev);
	put_device(dev);
}
#endif /* CONFIG_INFINIBAND_KITE_KUNIT_TEST */

module_auxiliary_driver(kite_ib_driver);
