-- The FIX gateway (ADR 0025). A company's SenderCompID, the hash of the password its
-- Logon carries, and whether its Logon resets the sequence numbers.
alter table company add column fix_comp_id text;
alter table company add column fix_password_hash text;
alter table company add column fix_reset_on_logon integer not null default 0;
create unique index company_fix_comp_id on company (fix_comp_id) where fix_comp_id is not null;

-- One FIX session per company: the sequence numbers both ways, what the engine needs to
-- recover after a crash, and what the sessions screen shows.
create table fix_session (
    company_id blob primary key references company (company_id),
    next_sender_seq integer not null default 1,
    next_target_seq integer not null default 1,
    -- The highest inbound MsgSeqNum acted on in full (0: none).
    app_watermark integer not null default 0,
    reset_owed integer not null default 0,
    logged_on integer not null default 0,
    last_message_at integer,
    created_at integer not null
);

-- Every sequenced message the venue sent, for ResendRequests.
create table fix_message (
    company_id blob not null references company (company_id),
    seq integer not null,
    msg_type text not null,
    frame blob not null,
    primary key (company_id, seq)
);

-- Application messages waiting for a company's session, written in the transaction of
-- the change that caused them; `sent_seq` is set in the write that files the frame.
create table fix_outbox (
    fix_outbox_id text primary key,
    company_id blob not null references company (company_id),
    msg_type text not null,
    fields text not null,
    created_at integer not null,
    sent_seq integer,
    sent_at integer
);
create index fix_outbox_pending on fix_outbox (company_id, created_at) where sent_seq is null;

-- Parent orders an execution system sent, with its ClOrdID.
create table fix_parent_order (
    parent_order_id blob primary key references parent_order (parent_order_id),
    company_id blob not null references company (company_id),
    cl_ord_id text not null,
    unique (company_id, cl_ord_id)
);
