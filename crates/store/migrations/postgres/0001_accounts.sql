create table company (
    company_id uuid primary key,
    name text not null unique,
    full_name text not null,
    roles jsonb not null default '[]',
    created_at timestamptz not null,
    updated_at timestamptz not null
);

create table app_user (
    user_id uuid primary key,
    company_id uuid not null references company (company_id),
    email text not null unique check (email = lower(email)),
    first_name text not null,
    last_name text not null,
    roles jsonb not null default '[]',
    password_hash text,
    active boolean not null,
    verified boolean not null,
    auto_accept text check (auto_accept in ('INSTANT', 'ACCEPT_WITH_DELAY', 'REJECT_WITH_DELAY')),
    parent_order_limit_multiplier bigint check (parent_order_limit_multiplier > 0),
    ui_metadata jsonb not null default '[]',
    fix_integration boolean not null default false,
    ems_trader_id text,
    created_at timestamptz not null,
    updated_at timestamptz not null
);
create index app_user_company on app_user (company_id);

create table session (
    session_id uuid primary key,
    user_id uuid not null references app_user (user_id) on delete cascade,
    token_hash text not null unique,
    created_at timestamptz not null,
    expires_at timestamptz not null
);
create index session_by_user on session (user_id);

create table link_token (
    token_hash text primary key,
    user_id uuid not null references app_user (user_id) on delete cascade,
    purpose text not null check (purpose in ('RESET', 'ACTIVATION')),
    created_at timestamptz not null,
    expires_at timestamptz not null,
    used_at timestamptz
);
create index link_token_user on link_token (user_id);

create table action_log (
    action_log_id uuid primary key,
    entity text not null,
    entity_id uuid,
    operation text not null,
    user_id uuid references app_user (user_id),
    created_at timestamptz not null,
    details jsonb not null
);
create index action_log_created on action_log (created_at);

create table outbox (
    outbox_id uuid primary key,
    message_id text not null unique,
    payload jsonb not null,
    created_at timestamptz not null,
    sent_at timestamptz,
    attempts integer not null default 0 check (attempts >= 0),
    last_error text
);

create table timer (
    timer_id uuid primary key,
    kind text not null,
    payload jsonb not null,
    due_at timestamptz not null,
    dedupe_key text unique,
    locked_until timestamptz,
    attempts integer not null default 0 check (attempts >= 0)
);
create index timer_due on timer (due_at);
