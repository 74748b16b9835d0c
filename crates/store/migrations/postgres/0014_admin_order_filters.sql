-- The Orders panel filtered by company or by state, newest first: its pages and their
-- counts read these indexes' ranges instead of every order of the company (issue 12's
-- bench: 100,000 orders).
create index child_order_company_state on child_order (company_id, state, created_at);
create index child_order_state_created on child_order (state, created_at);
