-- Minimum execution size (issue 29, ADR 0041): a child order may carry the least one fill
-- of it may be, and a parent order (an execution system's MinQty) the size its child
-- orders take when they name none. Null: no minimum beyond the instrument's block.
alter table child_order add column min_execution integer
    check (min_execution > 0 and min_execution <= 1000000000000);
alter table parent_order add column min_execution integer
    check (min_execution > 0 and min_execution <= 1000000000000);
