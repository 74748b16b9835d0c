-- Which node holds a company's FIX session, and until when unless it renews (ADR 0026).
-- SQLite is one node; the columns keep the two backends' rows alike.
alter table fix_session add column owner_node text;
alter table fix_session add column owner_until integer;

-- E-mails not yet delivered, for /metrics' outbox depth and age.
create index outbox_pending on outbox (created_at) where sent_at is null;
