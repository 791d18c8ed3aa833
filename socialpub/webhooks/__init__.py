"""Webhook endpoints, and the signed delivery of outbox events to them.

How an event gets out:

1. A change writes an `Event` row in its own transaction (socialpub/events).
2. `fanout.fan_out_events` (periodic) turns each new event into one delivery per
   subscribed, enabled endpoint of the event's workspace and mode, exactly once.
3. `deliveries.dispatch_deliveries` (periodic) leases each endpoint with due
   deliveries to one `deliver_webhooks` job, which sends them in event order.
4. Every attempt is claimed, signed (`signing`), sent through the guarded outbound
   client and recorded; failures are retried with backoff for three days, and an
   endpoint failing all that time is disabled.

`endpoints` is what the dashboard and the CLI manage: endpoints, test pings, resends
and the delivery log of one workspace. `jobs` holds the job functions.
"""
