-- The kill switch in the schema, as on PostgreSQL (its migration 0013, ADR 0021): a
-- stopped company's new child order with working quantity is refused by the database
-- itself, whatever statement writes it. The order path's insert already checks the stop
-- in its own condition (one writer: nothing can come between), so on that path this
-- never fires and a batch of other firms' orders is never aborted by it.
create trigger child_order_company_stopped before insert on child_order
when new.working_quantity <> 0
 and exists (select 1 from company where company_id = new.company_id and trading_stopped_at is not null)
begin
    select raise(abort, 'company_trading_stopped');
end;
