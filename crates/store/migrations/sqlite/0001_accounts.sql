-- Times are integer microseconds since the Unix epoch (UTC); ids are 16-byte UUIDs.
create table company (
    company_id blob primary key,
    name text not null unique,
    full_name text not null,
    roles text not null default '[]',
    created_at integer not null,
    updated_at integer not null
);

create table app_user (
    user_id blob primary key,
    company_id blob not null references company (company_id),
    email text not null unique check (email = lower(email)),
    first_name text not null,
    last_name text not null,
    roles text not null default '[]',
    password_hash text,
    active integer not null check (active in (0, 1)),
    verified integer not null check (verified in (0, 1)),
    auto_accept text check (auto_accept in ('INSTANT', 'ACCEPT_WITH_DELAY', 'REJECT_WITH_DELAY')),
    parent_order_limit_multiplier integer check (parent_order_limit_multiplier > 0),
    ui_metadata text not null default '[]',
    fix_integration integer not null default 0 check (fix_integration in (0, 1)),
    ems_trader_id text,
    created_at integer not null,
    updated_at integer not null
);
create index app_user_company on app_user (company_id);

create table session (
    session_id blob primary key,
    user_id blob not null references app_user (user_id) on delete cascade,
    token_hash text not null unique,
    created_at integer not null,
    expires_at integer not null
);
create index session_by_user on session (user_id);

create table link_token (
    token_hash text primary key,
    user_id blob not null references app_user (user_id) on delete cascade,
    purpose text not null check (purpose in ('RESET', 'ACTIVATION')),
    created_at integer not null,
    expires_at integer not null,
    used_at integer
);
create index link_token_user on link_token (user_id);

create table action_log (
    action_log_id blob primary key,
    entity text not null,
    entity_id blob,
    operation text not null,
    user_id blob references app_user (user_id),
    created_at integer not null,
    details text not null
);
create index action_log_created on action_log (created_at);

create table outbox (
    outbox_id blob primary key,
    message_id text not null unique,
    payload text not null,
    created_at integer not null,
    sent_at integer,
    attempts integer not null default 0 check (attempts >= 0),
    last_error text
);

create table timer (
    timer_id blob primary key,
    kind text not null,
    payload text not null,
    due_at integer not null,
    dedupe_key text unique,
    locked_until integer,
    attempts integer not null default 0 check (attempts >= 0)
);
create index timer_due on timer (due_at);
