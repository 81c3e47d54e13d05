"""Events between the services over Redis Streams: the event schemas, publishing and batched
consumer groups, the outboxes that make up for a failed publish, and the backlog count."""
