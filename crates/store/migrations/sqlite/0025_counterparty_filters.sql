-- Counterparty filters (issue 29, ADR 0042): firms a company, or one of its traders, never
-- trades with, and the least reliability score it trades with. The owner is a company
-- (the firm's own filter) or a user (a trader's own); their ids never collide.
create table counterparty_filter (
    owner_id blob primary key,
    company_id blob not null references company (company_id),
    min_reliability_score integer check (min_reliability_score between 0 and 100),
    updated_at integer not null
);
create table counterparty_block (
    owner_id blob not null references counterparty_filter (owner_id) on delete cascade,
    blocked_company_id blob not null references company (company_id),
    primary key (owner_id, blocked_company_id)
);
