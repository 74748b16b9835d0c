-- The FIX gateway owns FIX (ADR 0030). The outbox holds the engine's reports as data
-- (`kind`, and the report as JSON); the gateway writes their FIX when it sends them.
alter table fix_outbox rename column msg_type to kind;
alter table fix_outbox rename column fields to report;
-- A row written before this holds FIX fields, not a report, and cannot be read: the
-- upgrade is made with the outbox drained (the `/metrics` backlog at 0), and any row
-- left is set aside under number 0, as a message that cannot be encoded is.
update fix_outbox set sent_seq = 0 where sent_seq is null;

-- A frame is filed with the outbox message it carries, if any (handed over beside the
-- frame, never read back from it), in one statement: the triggers below move the
-- session's next number and mark the message sent (the same logic as PostgreSQL's
-- `fix_message_filed`; an upsert that replaces a frame fires the update trigger).
alter table fix_message add column fix_outbox_id text;
alter table fix_message add column created_at integer not null default 0;

create trigger fix_message_inserted after insert on fix_message
begin
    insert into fix_session (company_id, next_sender_seq, last_message_at, created_at)
    values (new.company_id, new.seq + 1, new.created_at, new.created_at)
    on conflict (company_id) do update
        set next_sender_seq = max(next_sender_seq, excluded.next_sender_seq),
            last_message_at = excluded.last_message_at;
    update fix_outbox set sent_seq = new.seq, sent_at = new.created_at
     where fix_outbox_id = new.fix_outbox_id and company_id = new.company_id and sent_seq is null;
end;

create trigger fix_message_replaced after update on fix_message
begin
    insert into fix_session (company_id, next_sender_seq, last_message_at, created_at)
    values (new.company_id, new.seq + 1, new.created_at, new.created_at)
    on conflict (company_id) do update
        set next_sender_seq = max(next_sender_seq, excluded.next_sender_seq),
            last_message_at = excluded.last_message_at;
    update fix_outbox set sent_seq = new.seq, sent_at = new.created_at
     where fix_outbox_id = new.fix_outbox_id and company_id = new.company_id and sent_seq is null;
end;
