-- The rest of the admin area (issue 12): the kill switch, the Orders panel's paging
-- and the orders newsletter. SQLite has one writer, so the kill switch's refusal of new
-- child orders is the insert's own condition (ADR 0021); no trigger is needed.

-- Set while a company's trading is stopped (the kill switch); null otherwise.
alter table company add column trading_stopped_at integer;

-- The Orders panel pages every child order newest first.
create index child_order_created on child_order (created_at, order_id);

create table newsletter (
    newsletter_id blob primary key,
    name text not null,
    description text not null,
    -- What the digest covers: {"instrument_ids": [...]} or null for every active instrument.
    filter_criteria text,
    created_at integer not null,
    updated_at integer not null,
    last_sent_at integer
);

create table newsletter_recipient (
    newsletter_id blob not null references newsletter (newsletter_id) on delete cascade,
    user_id blob not null references app_user (user_id),
    added_at integer not null,
    primary key (newsletter_id, user_id)
);
