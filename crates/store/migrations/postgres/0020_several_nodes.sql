-- Which node holds a company's FIX session, and until when unless it renews (ADR 0026):
-- with several nodes a company still has one session at a time.
alter table fix_session
    add column owner_node text,
    add column owner_until timestamptz;

-- E-mails not yet delivered, for /metrics' outbox depth and age.
create index outbox_pending on outbox (created_at) where sent_at is null;
