// SPDX-License-Identifier: GPL-2.0
/*
 * Kite core: delivery of the device's events. Link and fatal events act on
 * the core's net_device first; completions, CQ and QP events and the link
 * and fatal events then go to the registered event client, the driver of
 * the RDMA auxiliary device.
 *
 * Copyright (c) 2026 The Kite authors
 */
#include <linux/export.h>
#include <linux/interrupt.h>

#include "kite.h"
#include "kite_trace.h"

static struct kite_event_client *kite_client_locked(struct kite_dev *kdev)
{
	return rcu_dereference_protected(kdev->client,
					 lockdep_is_held(&kdev->event_lock));
}

/* The carrier follows the link; only a registered netdev is told. */
static void kite_carrier(struct kite_dev *kdev, bool up)
{
	unsigned long flags;

	spin_lock_irqsave(&kdev->event_lock, flags);
	if (kdev->netdev)
		kite_eth_link_change(kdev, up);
	spin_unlock_irqrestore(&kdev->event_lock, flags);
}

static void kite_port_change(struct kite_dev *kdev, bool up)
{
	struct kite_event_client *client;

	dev_info(&kdev->pdev->dev, "link %s\n", up ? "up" : "down");
	kite_carrier(kdev, up);
	rcu_read_lock();
	client = rcu_dereference(kdev->client);
	if (client)
		client->ops->port(client, up);
	rcu_read_unlock();
}

static void kite_dev_fatal(struct kite_dev *kdev, u32 code)
{
	struct kite_event_client *client;

	trace_kite_dev_fatal(kdev, code);
	dev_err(&kdev->pdev->dev,
		"device reported a fatal error (code %u); device marked dead\n",
		code);
	kite_admin_mark_dead(&kdev->admin);
	kite_carrier(kdev, false);
	/* The client calls its consumers' handlers: not under our lock. */
	rcu_read_lock();
	client = rcu_dereference(kdev->client);
	if (client)
		client->ops->fatal(client);
	rcu_read_unlock();
	kite_health_fatal(kdev, code);
}

/* A CQ or QP event: the client knows the object, the core does not. */
static void kite_object_event(struct kite_dev *kdev, u8 type, u32 data)
{
	struct kite_event_client *client;

	rcu_read_lock();
	client = rcu_dereference(kdev->client);
	if (client)
		client->ops->async(client, type, data);
	else
		dev_dbg_ratelimited(&kdev->pdev->dev,
				    "event %u for object %u without a client\n",
				    type, data);
	rcu_read_unlock();
}

/**
 * kite_async_event() - act on one async event
 * @kdev: device
 * @eqe: entry of the async EQ
 *
 * Runs in the admin interrupt handler.
 */
void kite_async_event(struct kite_dev *kdev, const struct kite_eqe *eqe)
{
	u32 data = le32_to_cpu(eqe->data);

	switch (eqe->type) {
	case KITE_EVT_PORT_ACTIVE:
	case KITE_EVT_PORT_ERR:
		if (data != KITE_PORT_NUM) {
			dev_warn_ratelimited(&kdev->pdev->dev,
					     "port event for unknown port %u\n",
					     data);
			break;
		}
		kite_port_change(kdev, eqe->type == KITE_EVT_PORT_ACTIVE);
		break;
	case KITE_EVT_DEV_FATAL:
		kite_dev_fatal(kdev, data);
		break;
	case KITE_EVT_CQ_ERR:
	case KITE_EVT_QP_FATAL:
	case KITE_EVT_QP_REQ_ERR:
	case KITE_EVT_QP_ACCESS_ERR:
	case KITE_EVT_QP_LAST_WQE:
	case KITE_EVT_COMM_EST:
	case KITE_EVT_SRQ_LIMIT:
	case KITE_EVT_SRQ_ERR:
		kite_object_event(kdev, eqe->type, data);
		break;
	default:
		dev_warn_ratelimited(&kdev->pdev->dev,
				     "unhandled async event %u data 0x%x\n",
				     eqe->type, data);
		break;
	}
}

/**
 * kite_comp_event() - a completion event for CQ @cqn
 * @kdev: device
 * @cqn: CQ number from the EQE
 *
 * Runs in the completion EQ interrupt handler.
 */
void kite_comp_event(struct kite_dev *kdev, u32 cqn)
{
	struct kite_event_client *client;

	rcu_read_lock();
	client = rcu_dereference(kdev->client);
	if (client)
		client->ops->completion(client, cqn);
	else
		dev_dbg_ratelimited(&kdev->pdev->dev,
				    "completion event for CQ %u without a client\n",
				    cqn);
	rcu_read_unlock();
}

/**
 * kite_register_event_client() - have a device's events delivered
 * @kdev: device
 * @client: receiver, with every callback of its ops set
 *
 * Events from now on are delivered; earlier ones are not replayed (see
 * struct kite_event_ops). A client registers before it creates objects
 * on the device, so that no completion or object event of theirs is lost.
 *
 * Return: 0, or -EBUSY when the device has a client already.
 */
int kite_register_event_client(struct kite_dev *kdev,
			       struct kite_event_client *client)
{
	unsigned long flags;
	int err = 0;

	spin_lock_irqsave(&kdev->event_lock, flags);
	if (kite_client_locked(kdev))
		err = -EBUSY;
	else
		rcu_assign_pointer(kdev->client, client);
	spin_unlock_irqrestore(&kdev->event_lock, flags);
	return err;
}
EXPORT_SYMBOL_NS_GPL(kite_register_event_client, KITE);

/**
 * kite_unregister_event_client() - stop delivering events to a client
 * @kdev: device
 * @client: the registered client
 *
 * Sleeps: when this returns, no callback of @client runs any more.
 */
void kite_unregister_event_client(struct kite_dev *kdev,
				  struct kite_event_client *client)
{
	unsigned long flags;

	spin_lock_irqsave(&kdev->event_lock, flags);
	if (kite_client_locked(kdev) == client)
		RCU_INIT_POINTER(kdev->client, NULL);
	spin_unlock_irqrestore(&kdev->event_lock, flags);
	/* Callbacks that found the client before run to their end. */
	synchronize_rcu();
}
EXPORT_SYMBOL_NS_GPL(kite_unregister_event_client, KITE);

/**
 * kite_sync_comp_eq() - wait for a completion EQ's running handler
 * @kdev: device
 * @eq: one of @kdev's completion EQs
 *
 * A client that takes a CQ out of its lookup calls this before freeing it:
 * a completion callback that may have found the CQ has returned then.
 */
void kite_sync_comp_eq(struct kite_dev *kdev, const struct kite_eq *eq)
{
	synchronize_irq(pci_irq_vector(kdev->pdev, eq->vector));
}
EXPORT_SYMBOL_NS_GPL(kite_sync_comp_eq, KITE);

/**
 * kite_sync_async_events() - wait for the running admin interrupt handler
 * @kdev: device
 *
 * As kite_sync_comp_eq(), for the async callbacks (CQ and QP events, link
 * and fatal events).
 */
void kite_sync_async_events(struct kite_dev *kdev)
{
	synchronize_irq(pci_irq_vector(kdev->pdev, KITE_MSIX_ADMIN));
}
EXPORT_SYMBOL_NS_GPL(kite_sync_async_events, KITE);
