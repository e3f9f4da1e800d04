// SPDX-License-Identifier: GPL-2.0
/*
 * Kite core: the auxiliary device of the RDMA function ("kite.rdma.N"),
 * which kite_ib.ko binds. Its uevent carries MODALIAS=auxiliary:kite.rdma,
 * so that udev (or mdev) loads the RDMA driver.
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <linux/idr.h>
#include <linux/slab.h>

#include "kite.h"

/* Auxiliary device ids are unique per name across the system. */
static DEFINE_IDA(kite_adev_ida);

static void kite_adev_release(struct device *dev)
{
	struct kite_adev *kadev = container_of(dev, struct kite_adev,
					       adev.dev);

	ida_free(&kite_adev_ida, kadev->adev.id);
	kfree(kadev);
}

/**
 * kite_aux_add() - create the RDMA auxiliary device of a function
 * @kdev: device with its admin queue, EQs and net_device set up
 *
 * A driver already loaded binds the new device before this returns.
 *
 * Return: 0 or a negative errno.
 */
int kite_aux_add(struct kite_dev *kdev)
{
	struct kite_adev *kadev;
	int id, err;

	id = ida_alloc(&kite_adev_ida, GFP_KERNEL);
	if (id < 0)
		return id;
	kadev = kzalloc(sizeof(*kadev), GFP_KERNEL);
	if (!kadev) {
		ida_free(&kite_adev_ida, id);
		return -ENOMEM;
	}
	kadev->kdev = kdev;
	kadev->adev.name = KITE_ADEV_NAME_RDMA;
	kadev->adev.id = id;
	kadev->adev.dev.parent = &kdev->pdev->dev;
	kadev->adev.dev.release = kite_adev_release;

	err = auxiliary_device_init(&kadev->adev);
	if (err) {
		ida_free(&kite_adev_ida, id);
		kfree(kadev);
		return err;
	}
	/* From here on the release callback frees kadev and its id. */
	err = auxiliary_device_add(&kadev->adev);
	if (err) {
		auxiliary_device_uninit(&kadev->adev);
		return err;
	}
	kdev->rdma_adev = kadev;
	return 0;
}

/**
 * kite_aux_del() - delete the RDMA auxiliary device
 * @kdev: device
 *
 * Its driver's remove runs first (the ib_device goes away), while
 * everything the driver uses is still set up.
 */
void kite_aux_del(struct kite_dev *kdev)
{
	struct kite_adev *kadev = kdev->rdma_adev;

	if (!kadev)
		return;
	kdev->rdma_adev = NULL;
	auxiliary_device_delete(&kadev->adev);
	auxiliary_device_uninit(&kadev->adev);
}
