-- Allocations and give-ups (issue 29, ADR 0045). A company's accounts, set by the venue's
-- operators; a trader splits a matched child order's quantity across them, and may give
-- the trade up to another of the firm's brokers for clearing. Each change is a new
-- version, sent to the executing broker (FIX AllocationInstruction, e-mail); the broker's
-- AllocationInstructionAck answers the version it names.
create table company_account (
    account_id uuid primary key,
    company_id uuid not null references company (company_id),
    code text not null,
    name text not null,
    active boolean not null,
    created_at timestamptz not null,
    updated_at timestamptz not null,
    unique (company_id, code)
);
create table allocation (
    order_id uuid primary key references child_order (order_id),
    version bigint not null check (version > 0),
    give_up_broker_id uuid references company (company_id),
    -- The lines as JSON, each naming its account's id and code when allocated:
    -- [{"account_id", "code", "name", "quantity"}].
    lines text not null,
    -- The executing broker's answer to this version over FIX: none yet, accepted, rejected.
    ack text not null check (ack in ('PENDING', 'ACCEPTED', 'REJECTED')),
    ack_text text,
    updated_by uuid not null references app_user (user_id),
    updated_at timestamptz not null
);
