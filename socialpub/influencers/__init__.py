"""Influencers: the people a workspace works with on the platforms, the lists that
group them, the messages sent to them, the campaigns they take part in and what
they are paid.

- `records`: an influencer's fields checked as the contract says (handles, email,
  followers, engagement rate as a percentage, niches, ISO 3166-1 `location` from
  `countries`, ISO 639-1 `language`), and the columns the search reads derived from
  them (`fold`: case, accents and compatibility forms dropped).
- `search`: `GET /influencers`'s filters and sorts as criteria on those columns, each
  a test on the influencer's own row that an index (or trigrams, for `q`) serves.
- `service`: adding an influencer (a handle kept to one influencer of the mode: 409),
  retrieving one with its lists and outreach, the search, and the operators' list.
- `lists`: lists made the first time an influencer names one, listed with member
  counts; renamed and removed by operators.
- `outreach`: a message recorded `queued` (filled by the one placeholder engine from
  `message` or a content template, with the influencer's fields), by email or as a
  direct message through a connector that sends them (the sandbox in test mode); at
  most one per influencer per 24 hours unless forced (409); marked replied by
  operators.
- `delivery` and `jobs`: recorded outreach sent afterwards by a claimed job, the
  service's one way of sending recorded messages (socialpub.sending) that crisis
  notifications share: emails through the one mailer (socialpub.mailer; left queued
  without an SMTP server), direct messages through the account's connector.
- `campaigns`: created, listed, moved forward by operators; completing one records a
  pending payment per influencer, the budget shared in minor units.
- `payments`: listed by the API, recorded by operators (CLI, dashboard) and by
  campaign completion under an idempotency key unique in the mode (a retried
  recording never pays twice), cancelled while pending, paid for good.
- `schemas`: the contract's shapes.
"""
