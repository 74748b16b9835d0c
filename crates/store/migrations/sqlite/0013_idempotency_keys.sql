-- Idempotent writes (ADR 0023): the audit row of each entity a keyed write creates carries
-- the client's key, which part of the write it is, and a digest of the request. The
-- unique index makes a retried write fail in the same transaction as its first run, so it
-- cannot act twice; the rows tell the retry what the first run made.
alter table action_log add column idempotency_key text;
alter table action_log add column idempotency_part integer;
alter table action_log add column request_hash text;

create unique index action_log_idempotency on action_log (user_id, idempotency_key, idempotency_part)
    where idempotency_key is not null;
