//! The store ports, written once for both backends.
//!
//! Both dialects accept the same SQL here: `$N` placeholders (sqlx's SQLite driver
//! takes them too), `on conflict … do update`, `returning`. What really differs lives
//! in each backend's module as a few constants that this macro's body names:
//! `FOR_UPDATE` (row locks), `WRITES_IN_ONE_STATEMENT`, `SKIP_LOCKED` (timer claims), `STRPOS` (substring
//! search), `HAS_COMPANY_TYPE` and `HAS_USER_ROLE` (JSON containment) and `BOOK_LEVELS` (a JSON aggregate), and in the column adapters of
//! [`crate::adapt`]. The macro is expanded once per backend, on its transaction type,
//! because sqlx's executor traits cannot be named generically over both drivers
//! without bounds that async traits do not carry.

/// `$from, $from+1, …` for `n` values.
pub(crate) fn placeholders(from: usize, n: usize) -> String {
    (from..from + n).map(|i| format!("${i}")).collect::<Vec<_>>().join(", ")
}

/// Files a sent frame under its number, replacing one filed there before; the
/// `fix_message` triggers move the session's next number and mark the outbox message the
/// frame carries sent (ADR 0030). One statement, run outside any transaction.
pub(crate) const FILE_FIX_MESSAGE: &str = "insert into fix_message (company_id, seq, msg_type, frame, fix_outbox_id, created_at) \
     values ($1, $2, $3, $4, $5, $6) on conflict (company_id, seq) do update set \
     msg_type = excluded.msg_type, frame = excluded.frame, fix_outbox_id = excluded.fix_outbox_id, \
     created_at = excluded.created_at";

/// A user with its company's name. Each name is looked up by its key for each user read,
/// never joined: without statistics (a young table) PostgreSQL would hash every company
/// for a join (ADR 0065).
pub const USER_SELECT: &str =
    "select u.*, (select c.name from company c where c.company_id = u.company_id) as company_name from app_user u";

/// Audit rows with the acting user's e-mail and company name (null for the venue's own acts).
pub(crate) const ACTION_LOG_SELECT: &str = "select a.*, u.email, c.name as company_name from action_log a \
     left join app_user u on u.user_id = a.user_id left join company c on c.company_id = u.company_id";

/// The `order by` of an action-log page: the chosen column, then newest first, so that
/// pages never overlap. Only these fixed texts reach the SQL, never the request's.
pub(crate) fn action_log_order(sort: upstairs_engine::model::ActionLogSort, descending: bool) -> String {
    use upstairs_engine::model::ActionLogSort;
    let dir = if descending { "desc" } else { "asc" };
    let column = match sort {
        ActionLogSort::CreatedAt => return format!("a.created_at {dir}, a.action_log_id {dir}"),
        ActionLogSort::Entity => "a.entity",
        ActionLogSort::Operation => "a.operation",
        // The venue's own rows (no user) sort as an empty e-mail on both backends, whose
        // defaults for nulls differ.
        ActionLogSort::Email => "coalesce(u.email, '')",
    };
    format!("{column} {dir}, a.created_at desc, a.action_log_id desc")
}

/// The Orders panel's rows for the page of ids `p` (a subquery the caller adds before
/// it): a child order with who placed it, for which company, on which instrument,
/// through which broker. The page is cut from the index alone and only its rows are
/// joined, so a deep page costs the index entries it skips, not their joins.
pub(crate) const ADMIN_ORDER_JOINS: &str = "join child_order c on c.order_id = p.order_id \
     join app_user u on u.user_id = c.created_by join company co on co.company_id = c.company_id \
     join instrument i on i.instrument_id = c.instrument_id join company b on b.company_id = c.broker_id";

/// The `where` of an Orders panel page: only the filters given, so that each backend
/// plans for what is asked; the placeholders are bound in this order by the caller.
pub(crate) fn admin_order_filter(f: &upstairs_engine::model::AdminOrderFilter) -> (String, usize) {
    let mut conds = Vec::new();
    let mut n = 0;
    let mut next = || {
        n += 1;
        format!("${n}")
    };
    if f.order_id.is_some() {
        conds.push(format!("c.order_id = {}", next()));
    }
    if f.company_id.is_some() {
        conds.push(format!("c.company_id = {}", next()));
    }
    if f.instrument_id.is_some() {
        conds.push(format!("c.instrument_id = {}", next()));
    }
    if !f.states.is_empty() {
        let list: Vec<String> = f.states.iter().map(|_| next()).collect();
        conds.push(format!("c.state in ({})", list.join(", ")));
    }
    if f.from.is_some() {
        conds.push(format!("c.created_at >= {}", next()));
    }
    if f.until.is_some() {
        conds.push(format!("c.created_at < {}", next()));
    }
    let filter = if conds.is_empty() { String::new() } else { format!(" where {}", conds.join(" and ")) };
    (filter, n)
}

/// Both sides of every match request in the states `$1`–`$5`, as billing lists them. The
/// cross joins name the order SQLite must nest the loops in (each request, then each side,
/// then primary-key lookups); left to choose, it scanned the small company table first
/// and probed every request from each pair of companies. PostgreSQL plans them freely.
pub(crate) const BILLING_ITEMS: &str = "select co.name as company_name, u.first_name, u.last_name, u.user_id, \
            b.name as broker_name, o.broker_id, m.match_request_id, o.order_id, o.parent_order_id, \
            m.created_at as match_request_created_at, i.name as instrument_name, i.bbg_code, \
            i.exchange_instrument_id, i.exchange, i.exchange_iso_code, coalesce(m.tick_size, i.tick_size) as tick_size, \
            i.term, o.direction, \
            m.quantity, m.price, a.lines as allocation_lines, g.name as give_up_broker_name \
     from match_request m cross join (select 0 as side union all select 1) s cross join child_order o \
     cross join app_user u cross join company co cross join company b cross join instrument i \
     left join allocation a on a.order_id = o.order_id left join company g on g.company_id = a.give_up_broker_id \
     where m.state in ($1, $2, $3, $4, $5) \
       and o.order_id = case s.side when 0 then m.requesting_order_id else m.responding_order_id end \
       and u.user_id = case s.side when 0 then m.requesting_user_id else m.responding_user_id end \
       and co.company_id = o.company_id and b.company_id = o.broker_id and i.instrument_id = m.instrument_id \
     order by m.created_at desc, m.match_request_id, s.side";

/// A newsletter's recipients as the admin lists them.
pub(crate) const NEWSLETTER_RECIPIENTS: &str = "select r.newsletter_id, u.user_id, u.email, u.first_name, \
     u.last_name, c.name as company_name, u.roles from newsletter_recipient r \
     join app_user u on u.user_id = r.user_id join company c on c.company_id = u.company_id";

/// The columns of a child order as [`bind_order`] binds them (`$1`–`$19`).
pub(crate) const ORDER_COLUMNS: &str = "order_id, parent_order_id, company_id, created_by, instrument_id, direction, \
     state, price, quantity, iceberg, residual, broker_id, created_at, updated_at, working_quantity, \
     matched_quantity, rests, min_execution, shown";

/// SQLite's `n` child orders, each into a parent in the state its row names only, and
/// their audit rows: two statements whose placeholders are anonymous (`?`, bound in the
/// order they appear: SQLite finds a numbered one's number by a scan of all of them, once
/// per argument, quadratic in a batch's 900). The first binds each order's columns
/// ([`ORDER_COLUMNS`]), its parent's state and the block it was shown with; the second
/// each audit row's columns (as `bind_action_log` does), and returns the ids of the
/// orders written. Nothing is written of an order whose parent is in another state or
/// whose company's trading is stopped (the kill switch, ADR 0021), nor of a resting
/// iceberg whose block is no longer the instrument's (ADR 0057), nor their audit rows.
pub(crate) fn insert_orders_if_parent(n: usize) -> [String; 2] {
    let rows = |width: usize| {
        let row = format!("({})", vec!["?"; width].join(", "));
        vec![row; n].join(", ")
    };
    let columns = |width: usize| (1..=width).map(|c| format!("column{c}")).collect::<Vec<_>>().join(", ");
    [
        format!(
            "insert into child_order ({ORDER_COLUMNS}) select {} from (values {}) v where exists \
             (select 1 from parent_order where parent_order_id = v.column2 and state = v.column20) and not exists \
             (select 1 from company where company_id = v.column3 and trading_stopped_at is not null) \
             and case when v.column10 and v.column17 then exists \
             (select 1 from instrument where instrument_id = v.column5 and min_quantity = v.column21) else 1 end",
            columns(19),
            rows(21),
        ),
        format!(
            "insert into action_log (action_log_id, entity, entity_id, operation, user_id, created_at, details, \
             idempotency_key, idempotency_part, request_hash) select {} from (values {}) l \
             where exists (select 1 from child_order where order_id = l.column3) returning entity_id",
            columns(10),
            rows(10),
        ),
    ]
}

/// `sql` with every `$N` placeholder moved up by `by` (`$3` → `$28` for 25), so that
/// several copies of one statement take their own arguments in one batch.
pub(crate) fn shift_placeholders(sql: &str, by: usize) -> String {
    let mut out = String::with_capacity(sql.len() + 16);
    let mut chars = sql.char_indices().peekable();
    while let Some((_, c)) = chars.next() {
        out.push(c);
        if c != '$' {
            continue;
        }
        let mut n = String::new();
        while let Some((_, d)) = chars.peek().filter(|(_, d)| d.is_ascii_digit()) {
            n.push(*d);
            chars.next();
        }
        match n.parse::<usize>() {
            Ok(n) => out.push_str(&(n + by).to_string()),
            Err(_) => out.push_str(&n),
        }
    }
    out
}

/// Orders shown again by their block ([`OrderRepo::show_by_block`]): the rows of values
/// (order id, state, price, quantity and iceberg flag as read, new shown part) go between
/// the two parts. Only the key is a condition an index may serve (ADR 0063).
pub(crate) const SHOW_BY_BLOCK: [&str; 2] = [
    "update child_order set shown = v.column6 from (values ",
    ") as v where child_order.order_id = v.column1 and (child_order.state, child_order.price, \
     child_order.quantity, child_order.iceberg) is not distinct from (v.column2, v.column3, v.column4, v.column5) \
     returning child_order.order_id",
];

/// A match request's columns `$1`–`$22` as `bind_match_request` binds them.
pub(crate) const INSERT_MATCH_REQUEST: &str = "insert into match_request (match_request_id, instrument_id, direction, \
     price, quantity, requesting_order_id, requesting_company_id, requesting_user_id, responding_order_id, \
     responding_company_id, responding_user_id, iceberg, state, created_at, expires_at, updated_at, take_price, rfq_id, \
     auto_answer_at, auto_accept, answered_automatically, answered_at, tick_size, min_quantity) \
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, \
     $24)";

/// An instrument's settings with the e-mail of the operator who set them (ADR 0051).
pub(crate) const SETTINGS: &str = "select s.setting_id, s.instrument_id, s.effective_from, s.tick_size, \
     s.exchange_tick_size, s.min_quantity, s.created_by, u.email, s.created_at, s.applied_at \
     from instrument_setting s left join app_user u on u.user_id = s.created_by";

/// An exchange's columns, before the instruments count the caller adds (ADR 0052).
pub(crate) const EXCHANGES: &str = "select e.mic, e.name, e.time_zone, e.open_time, e.close_time, \
     e.parent_orders_from, e.days, e.holidays, e.created_at, e.updated_at";

/// A timer's columns `$1`–`$6` as `bind_timer` binds them; one already there stays.
pub(crate) const INSERT_TIMER: &str = "insert into timer (timer_id, kind, payload, due_at, dedupe_key, attempts) \
     values ($1, $2, $3, $4, $5, $6) on conflict do nothing";

/// A notification's columns `$1`–`$19` as `bind_notification` binds them.
pub(crate) const INSERT_NOTIFICATION: &str = "insert into notification (notification_id, user_id, type, status, \
     instrument_id, match_request_id, role, read, archived, created_at, expired_at, updated_at, rfq_id, order_id, \
     old_price, new_price, direction, quantity, price) \
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19)";

/// A broker's link's columns `$1`–`$9` as `bind_broker_confirmation` binds them.
pub(crate) const INSERT_BROKER_CONFIRMATION: &str = "insert into broker_confirmation (token_hash, order_id, \
     match_request_id, broker_id, step, created_at, expires_at, answered_at, answer) \
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9)";

/// An e-mail's columns `$1`–`$7` as `bind_outbox` binds them.
pub(crate) const INSERT_OUTBOX: &str = "insert into outbox (outbox_id, message_id, payload, created_at, sent_at, \
     attempts, last_error) values ($1, $2, $3, $4, $5, $6, $7)";

/// An audit row's columns `$1`–`$10` as `bind_action_log` binds them.
pub(crate) const INSERT_ACTION_LOG: &str = "insert into action_log (action_log_id, entity, entity_id, operation, \
     user_id, created_at, details, idempotency_key, idempotency_part, request_hash) \
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)";

macro_rules! shared_repos {
    ($tx:ty, $db:ty) => {
        /// A company with its default broker's name and its brokers in order (the backend's
        /// `company_brokers!`): one statement per read, built at compile time.
        const COMPANY_SELECT: &str = concat!(
            "select c.*, (select d.name from company d where d.company_id = c.default_broker_id) as default_broker_name, ",
            company_brokers!(),
            " as brokers from company c"
        );

        /// A take's read of the side its parent `$1` (of company `$2`) faces: the working
        /// orders of other companies within the limit `$3`, best first for the parent (the
        /// lowest sell for a buy, the highest buy for a sell), each price's oldest first, at
        /// most `$4`, each with its creator's auto-answer. It walks `child_order_facing` in
        /// that order and stops after `$4` rows however deep the side (ADR 0062); the
        /// parent's instrument, side and limit are read once each, as the scan's constants.
        pub static ORDERS_FACING: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
            let own = "from parent_order where parent_order_id = $1 and company_id = $2";
            let (buy, sell) = (Direction::Buy.as_str(), Direction::Sell.as_str());
            format!(
                "select c.*, u.auto_accept as creator_auto_accept from child_order c \
                 join app_user u on u.user_id = c.created_by \
                 where c.instrument_id = (select instrument_id {own}) \
                 and c.direction = (select case direction when '{buy}' then '{sell}' else '{buy}' end {own}) \
                 and c.state = '{working}' and c.company_id <> $2 \
                 and {FACING_KEY} <= (select case direction when '{buy}' then {LIMIT_AS_NUMBER} \
                 else -{LIMIT_AS_NUMBER} end {own}) \
                 order by {FACING_KEY}, c.created_at, c.order_id limit $4",
                working = OrderState::Working.as_str(),
            )
        });

        /// An order's update from what it was (`$7`–`$11`: its key, state, price, quantity and
        /// iceberg flag as read) to what it becomes. Only the key is a condition an index may
        /// serve: the rest is compared with `is not distinct from` (the same as `=` on these
        /// non-null columns), which no index serves, so that no plan, however young the
        /// table's statistics when it was made, looks the row up by its state (ADR 0063).
        pub const UPDATE_ORDER: &str = "update child_order set state = $1, price = $2, quantity = $3, \
             iceberg = $4, residual = $5, updated_at = $6, working_quantity = $12, matched_quantity = $13, \
             rests = $14, min_execution = $15, shown = $16 where order_id = $7 \
             and (state, price, quantity, iceberg) is not distinct from ($8, $9, $10, $11)";

        /// A FIX frame `$4` of company `$3` marked sent as `$1` at `$2`, unless it was. Its
        /// key alone is a condition an index may serve (as in [`UPDATE_ORDER`]): planned
        /// on a young table, `company_id = $3` read the company's unsent backlog by
        /// `fix_outbox_pending` (ADR 0063).
        pub const MARK_FIX_OUTBOX_SENT: &str = "update fix_outbox set sent_seq = $1, sent_at = $2 \
             where fix_outbox_id = $4 and company_id is not distinct from $3 and sent_seq is null";

        /// Files a sent FIX frame in one statement on `db` ([`sql::FILE_FIX_MESSAGE`]).
        async fn file_fix_message_on<'e, E>(db: E, m: &'e FiledFixMessage) -> StoreResult<()>
        where
            E: sqlx::Executor<'e, Database = $db>,
        {
            sqlx::query(sql::FILE_FIX_MESSAGE)
                .bind(m.company_id.0)
                .bind(m.seq)
                .bind(&m.msg_type)
                .bind(&m.frame)
                .bind(m.fix_outbox_id.as_deref())
                .bind(Ts(m.created_at))
                .execute(db)
                .await
                .map_err(map_err)?;
            Ok(())
        }

        async fn touch_band_on<'e, E>(
            db: E,
            id: InstrumentId,
            min: rust_decimal::Decimal,
            max: rust_decimal::Decimal,
            at: DateTime<Utc>,
        ) -> StoreResult<bool>
        where
            E: sqlx::Executor<'e, Database = $db>,
        {
            let done = sqlx::query(
                "update instrument set band_seen_at = $2 where instrument_id = $1 \
                 and min_tick_price = $3 and max_tick_price = $4 and not prices_stale",
            )
            .bind(id.0)
            .bind(Ts(at))
            .bind(Dec(min))
            .bind(Dec(max))
            .execute(db)
            .await
            .map_err(map_err)?;
            Ok(done.rows_affected() == 1)
        }

        /// Binds a child order's columns in the order of [`sql::ORDER_COLUMNS`]; the row
        /// carries what it adds to its parent's counters and whether it rests (ADR 0019).
        fn bind_order<'q>(
            q: sqlx::query::Query<'q, $db, <$db as sqlx::Database>::Arguments>,
            o: &ChildOrder,
            shown: i64,
        ) -> sqlx::query::Query<'q, $db, <$db as sqlx::Database>::Arguments> {
            let (working, matched) = o.parent_counts();
            q.bind(o.order_id.0)
                .bind(o.parent_order_id.0)
                .bind(o.company_id.0)
                .bind(o.created_by.0)
                .bind(o.instrument_id.0)
                .bind(o.direction.as_str())
                .bind(o.state.as_str())
                .bind(Dec(o.price))
                .bind(o.quantity)
                .bind(o.iceberg)
                .bind(o.residual)
                .bind(o.broker_id.0)
                .bind(Ts(o.created_at))
                .bind(Ts(o.updated_at))
                .bind(working)
                .bind(matched)
                .bind(o.rests())
                .bind(o.min_execution)
                .bind(shown)
        }

        /// Binds an audit row's columns in the order of `insert into action_log`.
        fn bind_action_log<'q>(
            q: sqlx::query::Query<'q, $db, <$db as sqlx::Database>::Arguments>,
            a: &'q ActionLog,
        ) -> sqlx::query::Query<'q, $db, <$db as sqlx::Database>::Arguments> {
            q.bind(a.action_log_id)
                .bind(a.entity.as_str())
                .bind(a.entity_id)
                .bind(a.operation.as_str())
                .bind(a.user_id.map(|u| u.0))
                .bind(Ts(a.created_at))
                .bind(Json(&a.details))
                .bind(a.keyed.as_ref().map(|k| k.key.key.as_str()))
                .bind(a.keyed.as_ref().map(|k| k.part))
                .bind(a.keyed.as_ref().map(|k| k.key.request_hash.as_str()))
        }

        /// Binds a match request's columns in the order of [`sql::INSERT_MATCH_REQUEST`].
        fn bind_match_request<'q>(
            q: sqlx::query::Query<'q, $db, <$db as sqlx::Database>::Arguments>,
            m: &MatchRequest,
        ) -> sqlx::query::Query<'q, $db, <$db as sqlx::Database>::Arguments> {
            q.bind(m.match_request_id.0)
                .bind(m.instrument_id.0)
                .bind(m.direction.as_str())
                .bind(Dec(m.price))
                .bind(m.quantity)
                .bind(m.requesting_order_id.0)
                .bind(m.requesting_company_id.0)
                .bind(m.requesting_user_id.0)
                .bind(m.responding_order_id.0)
                .bind(m.responding_company_id.0)
                .bind(m.responding_user_id.0)
                .bind(m.iceberg)
                .bind(m.state.as_str())
                .bind(Ts(m.created_at))
                .bind(Ts(m.expires_at))
                .bind(Ts(m.updated_at))
                .bind(Dec(m.take_price))
                .bind(m.rfq_id.map(|r| r.0))
                .bind(m.auto_answer.map(|a| Ts(a.at)))
                .bind(m.auto_answer.map(|a| a.accept))
                .bind(m.answered_automatically)
                .bind(m.answered_at.map(Ts))
                .bind(Dec(m.tick_size))
                .bind(m.min_quantity)
        }

        /// Binds a broker's link's columns in the order of [`sql::INSERT_BROKER_CONFIRMATION`].
        fn bind_broker_confirmation<'q>(
            q: sqlx::query::Query<'q, $db, <$db as sqlx::Database>::Arguments>,
            c: &'q BrokerConfirmation,
        ) -> sqlx::query::Query<'q, $db, <$db as sqlx::Database>::Arguments> {
            q.bind(c.token_hash.as_str())
                .bind(c.order_id.0)
                .bind(c.match_request_id.0)
                .bind(c.broker_id.0)
                .bind(c.step.as_str())
                .bind(Ts(c.created_at))
                .bind(Ts(c.expires_at))
                .bind(c.answered.map(|(at, _)| Ts(at)))
                .bind(c.answered.map(|(_, a)| a))
        }

        /// Binds an e-mail's columns in the order of [`sql::INSERT_OUTBOX`].
        fn bind_outbox<'q>(
            q: sqlx::query::Query<'q, $db, <$db as sqlx::Database>::Arguments>,
            m: &'q OutboxMessage,
        ) -> sqlx::query::Query<'q, $db, <$db as sqlx::Database>::Arguments> {
            q.bind(m.outbox_id)
                .bind(m.email.message_id.as_str())
                .bind(Json(&m.email))
                .bind(Ts(m.created_at))
                .bind(m.sent_at.map(Ts))
                .bind(m.attempts)
                .bind(m.last_error.as_deref())
        }

        /// Binds a timer's columns in the order of [`sql::INSERT_TIMER`].
        fn bind_timer<'q>(
            q: sqlx::query::Query<'q, $db, <$db as sqlx::Database>::Arguments>,
            t: &'q Timer,
        ) -> sqlx::query::Query<'q, $db, <$db as sqlx::Database>::Arguments> {
            q.bind(t.timer_id)
                .bind(t.kind.as_str())
                .bind(Json(&t.payload))
                .bind(Ts(t.due_at))
                .bind(t.dedupe_key.as_deref())
                .bind(t.attempts)
        }

        /// Binds an action-log page's filter as `$1`–`$7` (e-mail, entity, operation,
        /// company, from, until, without the venue's band moves).
        fn bind_action_log_filter<'q, O>(
            q: sqlx::query::QueryAs<'q, $db, O, <$db as sqlx::Database>::Arguments>,
            f: &'q ActionLogFilter,
        ) -> sqlx::query::QueryAs<'q, $db, O, <$db as sqlx::Database>::Arguments> {
            q.bind(&f.email)
                .bind(&f.entity)
                .bind(&f.operation)
                .bind(f.company_id.map(|c| c.0))
                .bind(f.from.map(Ts))
                .bind(f.until.map(Ts))
                .bind(f.without_automatic_band_moves)
        }

        /// Binds a notification's columns in the order of [`sql::INSERT_NOTIFICATION`].
        fn bind_notification<'q>(
            q: sqlx::query::Query<'q, $db, <$db as sqlx::Database>::Arguments>,
            n: &Notification,
        ) -> sqlx::query::Query<'q, $db, <$db as sqlx::Database>::Arguments> {
            q.bind(n.notification_id.0)
                .bind(n.user_id.0)
                .bind(n.notification_type.as_str())
                .bind(n.status.as_str())
                .bind(n.instrument_id.0)
                .bind(match n.subject {
                    Subject::MatchRequest(m) => Some(m.0),
                    _ => None,
                })
                .bind(n.role.as_str())
                .bind(n.read)
                .bind(n.archived)
                .bind(Ts(n.created_at))
                .bind(Ts(n.expired_at))
                .bind(Ts(n.updated_at))
                .bind(match n.subject {
                    Subject::Rfq(r) => Some(r.0),
                    _ => None,
                })
                .bind(match n.subject {
                    Subject::PriceCorrection { order_id, .. } | Subject::Order(order_id) => Some(order_id.0),
                    _ => None,
                })
                .bind(match n.subject {
                    Subject::PriceCorrection { old_price, .. } => Some(Dec(old_price)),
                    _ => None,
                })
                .bind(match n.subject {
                    Subject::PriceCorrection { new_price, .. } => Some(Dec(new_price)),
                    _ => None,
                })
                .bind(n.terms.map(|t| t.direction.as_str()))
                .bind(n.terms.map(|t| t.quantity))
                .bind(n.terms.map(|t| Dec(t.price)))
        }

        impl $tx {
            /// Moves the pending timer of `dedupe_key` to `due_at` where `query` (its `$1`,
            /// `$2`) says: later only, or sooner only.
            async fn shift_timer(&mut self, query: &'static str, dedupe_key: &str, due_at: DateTime<Utc>) -> StoreResult<()> {
                sqlx::query(query).bind(dedupe_key).bind(Ts(due_at)).execute(&mut *self.tx).await.map_err(map_err)?;
                Ok(())
            }

            /// Whether a timer is new to this transaction: one with a dedupe key already
            /// written in it is not written again (outside a transaction, always).
            fn remember_timer(&mut self, t: &Timer) -> bool {
                match t.dedupe_key.as_ref().filter(|_| matches!(self.tx, Conn::Tx(_))) {
                    Some(key) => self.memo.timers.insert(key.clone()),
                    None => true,
                }
            }

            async fn write_brokers(&mut self, c: &Company) -> StoreResult<()> {
                self.memo.forget();
                sqlx::query("delete from company_broker where company_id = $1")
                    .bind(c.company_id.0)
                    .execute(&mut *self.tx)
                    .await
                    .map_err(map_err)?;
                for (i, b) in c.brokers.iter().enumerate() {
                    sqlx::query("insert into company_broker (company_id, broker_id, position) values ($1, $2, $3)")
                        .bind(c.company_id.0)
                        .bind(b.company_id.0)
                        .bind(i as i64)
                        .execute(&mut *self.tx)
                        .await
                        .map_err(map_err)?;
                }
                Ok(())
            }
        }

        #[async_trait]
        impl CompanyRepo for $tx {
            async fn insert_company(&mut self, c: &Company) -> StoreResult<()> {
                self.memo.forget();
                sqlx::query(
                    "insert into company (company_id, name, full_name, roles, ems_identifier, account, \
                     trade_confirmation_email, trade_confirmation_via_email_enabled, default_broker_id, created_at, \
                     updated_at, fix_comp_id, fix_reset_on_logon, fix_password_hash, fix_cancel_on_disconnect) \
                     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)",
                )
                .bind(c.company_id.0)
                .bind(&c.name)
                .bind(&c.full_name)
                .bind(Json(&c.roles))
                .bind(&c.ems_identifier)
                .bind(&c.account)
                .bind(&c.trade_confirmation_email)
                .bind(c.trade_confirmation_via_email_enabled)
                .bind(c.default_broker.as_ref().map(|b| b.company_id.0))
                .bind(Ts(c.created_at))
                .bind(Ts(c.updated_at))
                .bind(&c.fix_comp_id)
                .bind(c.fix_reset_on_logon)
                .bind(&c.fix_password_hash)
                .bind(c.fix_cancel_on_disconnect)
                .execute(&mut *self.tx)
                .await
                .map_err(map_err)?;
                self.write_brokers(c).await
            }

            async fn update_company(&mut self, c: &Company) -> StoreResult<()> {
                self.memo.forget();
                sqlx::query(
                    "update company set name = $1, full_name = $2, roles = $3, ems_identifier = $4, account = $5, \
                     trade_confirmation_email = $6, trade_confirmation_via_email_enabled = $7, \
                     default_broker_id = $8, updated_at = $9, fix_comp_id = $11, fix_reset_on_logon = $12, \
                     fix_password_hash = $13, fix_cancel_on_disconnect = $14 \
                     where company_id = $10",
                )
                .bind(&c.name)
                .bind(&c.full_name)
                .bind(Json(&c.roles))
                .bind(&c.ems_identifier)
                .bind(&c.account)
                .bind(&c.trade_confirmation_email)
                .bind(c.trade_confirmation_via_email_enabled)
                .bind(c.default_broker.as_ref().map(|b| b.company_id.0))
                .bind(Ts(c.updated_at))
                .bind(c.company_id.0)
                .bind(&c.fix_comp_id)
                .bind(c.fix_reset_on_logon)
                .bind(&c.fix_password_hash)
                .bind(c.fix_cancel_on_disconnect)
                .execute(&mut *self.tx)
                .await
                .map_err(map_err)?;
                self.write_brokers(c).await
            }

            async fn company(&mut self, id: CompanyId) -> StoreResult<Option<Company>> {
                let in_tx = matches!(self.tx, Conn::Tx(_));
                if let Some(known) = self.memo.companies.get(&id).filter(|_| in_tx) {
                    return Ok(known.clone());
                }
                let rows = sqlx::query_as(sqlx::AssertSqlSafe(format!("{} where c.company_id = $1", COMPANY_SELECT)))
                    .bind(id.0)
                    .fetch_all(&mut *self.tx)
                    .await
                    .map_err(map_err)?;
                let company = convert(rows, CompanyRow::into_model)?.pop();
                if in_tx {
                    self.memo.companies.insert(id, company.clone());
                }
                Ok(company)
            }

            async fn read_ahead(&mut self, companies: &[CompanyId], users: &[UserId]) -> StoreResult<()> {
                if !matches!(self.tx, Conn::Tx(_)) {
                    return Ok(());
                }
                let mut companies: Vec<CompanyId> =
                    companies.iter().copied().filter(|c| !self.memo.companies.contains_key(c)).collect();
                companies.sort_by_key(|c| c.0);
                companies.dedup();
                if !companies.is_empty() {
                    let query = format!(
                        "{} where c.company_id in ({})",
                        COMPANY_SELECT,
                        sql::placeholders(1, companies.len())
                    );
                    let mut q = sqlx::query_as(sqlx::AssertSqlSafe(query));
                    for c in &companies {
                        q = q.bind(c.0);
                    }
                    let rows = q.fetch_all(&mut *self.tx).await.map_err(map_err)?;
                    let found = convert(rows, CompanyRow::into_model)?;
                    for c in companies {
                        self.memo.companies.insert(c, found.iter().find(|f| f.company_id == c).cloned());
                    }
                }
                let mut users: Vec<UserId> = users.iter().copied().filter(|u| !self.memo.users.contains_key(u)).collect();
                users.sort_by_key(|u| u.0);
                users.dedup();
                if !users.is_empty() {
                    let query = format!("{} where u.user_id in ({})", sql::USER_SELECT, sql::placeholders(1, users.len()));
                    let mut q = sqlx::query_as::<_, UserRow>(sqlx::AssertSqlSafe(query));
                    for u in &users {
                        q = q.bind(u.0);
                    }
                    let rows = q.fetch_all(&mut *self.tx).await.map_err(map_err)?;
                    let found = convert(rows, UserRow::into_model)?;
                    for u in users {
                        self.memo.users.insert(u, found.iter().find(|f| f.user.user_id == u).cloned());
                    }
                }
                Ok(())
            }

            async fn company_by_name(&mut self, name: &str) -> StoreResult<Option<Company>> {
                let rows = sqlx::query_as(sqlx::AssertSqlSafe(format!("{} where c.name = $1", COMPANY_SELECT)))
                    .bind(name)
                    .fetch_all(&mut *self.tx)
                    .await
                    .map_err(map_err)?;
                Ok(convert(rows, CompanyRow::into_model)?.pop())
            }

            async fn count_companies(&mut self) -> StoreResult<i64> {
                sqlx::query_scalar("select count(*) from company").fetch_one(&mut *self.tx).await.map_err(map_err)
            }

            async fn companies(&mut self, page: i64, size: i64) -> StoreResult<Page<Company>> {
                let total_items = self.count_companies().await?;
                let rows = sqlx::query_as(sqlx::AssertSqlSafe(format!(
                    "{} order by c.name limit $1 offset $2",
                    COMPANY_SELECT
                )))
                .bind(size)
                .bind(page * size)
                .fetch_all(&mut *self.tx)
                .await
                .map_err(map_err)?;
                Ok(Page { items: convert(rows, CompanyRow::into_model)?, total_items })
            }

            async fn companies_of_type(&mut self, company_type: &str) -> StoreResult<Vec<Company>> {
                let rows = sqlx::query_as(sqlx::AssertSqlSafe(format!(
                    "{} where {HAS_COMPANY_TYPE} order by c.name",
                    COMPANY_SELECT
                )))
                .bind(company_type)
                .fetch_all(&mut *self.tx)
                .await
                .map_err(map_err)?;
                convert(rows, CompanyRow::into_model)
            }

            async fn set_trading_stopped(
                &mut self,
                id: CompanyId,
                since: Option<DateTime<Utc>>,
                at: DateTime<Utc>,
            ) -> StoreResult<()> {
                self.memo.forget();
                sqlx::query("update company set trading_stopped_at = $1, updated_at = $2 where company_id = $3")
                    .bind(since.map(Ts))
                    .bind(Ts(at))
                    .bind(id.0)
                    .execute(&mut *self.tx)
                    .await
                    .map_err(map_err)?;
                Ok(())
            }

            async fn trading_stopped_since(&mut self, id: CompanyId) -> StoreResult<Option<DateTime<Utc>>> {
                let since: Option<Option<Ts>> =
                    sqlx::query_scalar("select trading_stopped_at from company where company_id = $1")
                        .bind(id.0)
                        .fetch_optional(&mut *self.tx)
                        .await
                        .map_err(map_err)?;
                Ok(since.flatten().map(|t| t.0))
            }

            async fn lock_parent_orders_of_company(&mut self, id: CompanyId) -> StoreResult<()> {
                sqlx::query(sqlx::AssertSqlSafe(format!(
                    "select parent_order_id from parent_order where company_id = $1 and state = $2{FOR_UPDATE}"
                )))
                .bind(id.0)
                .bind(ParentState::Active.as_str())
                .fetch_all(&mut *self.tx)
                .await
                .map_err(map_err)?;
                Ok(())
            }

            async fn companies_with_role(&mut self, role: upstairs_domain::Role) -> StoreResult<Vec<CompanyId>> {
                let ids: Vec<Uuid> = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
                    "select distinct u.company_id from app_user u where {HAS_USER_ROLE}"
                )))
                .bind(role.as_str())
                .fetch_all(&mut *self.tx)
                .await
                .map_err(map_err)?;
                Ok(ids.into_iter().map(CompanyId).collect())
            }

            async fn counterparty_filters(&mut self) -> StoreResult<Vec<CounterpartyFilter>> {
                let q = sqlx::query_as::<_, CounterpartyRow>(
                    "select f.owner_id, f.company_id, f.min_reliability_score, f.updated_at, b.blocked_company_id \
                     from counterparty_filter f left join counterparty_block b on b.owner_id = f.owner_id",
                );
                let mut out: Vec<CounterpartyFilter> = Vec::new();
                for r in q.fetch_all(&mut *self.tx).await.map_err(map_err)? {
                    let i = match out.iter().position(|f| f.owner_id == r.owner_id) {
                        Some(i) => i,
                        None => {
                            out.push(CounterpartyFilter {
                                owner_id: r.owner_id,
                                company_id: CompanyId(r.company_id),
                                min_reliability_score: r.min_reliability_score,
                                blocked: Default::default(),
                                updated_at: r.updated_at.0,
                            });
                            out.len() - 1
                        }
                    };
                    out[i].blocked.extend(r.blocked_company_id.map(CompanyId));
                }
                Ok(out)
            }

            async fn replace_counterparty_filter(&mut self, f: &CounterpartyFilter) -> StoreResult<()> {
                sqlx::query(
                    "insert into counterparty_filter (owner_id, company_id, min_reliability_score, updated_at) \
                     values ($1, $2, $3, $4) on conflict (owner_id) do update set \
                     min_reliability_score = excluded.min_reliability_score, updated_at = excluded.updated_at",
                )
                .bind(f.owner_id)
                .bind(f.company_id.0)
                .bind(f.min_reliability_score)
                .bind(Ts(f.updated_at))
                .execute(&mut *self.tx)
                .await
                .map_err(map_err)?;
                sqlx::query("delete from counterparty_block where owner_id = $1")
                    .bind(f.owner_id)
                    .execute(&mut *self.tx)
                    .await
                    .map_err(map_err)?;
                if !f.blocked.is_empty() {
                    let rows: Vec<String> =
                        (0..f.blocked.len()).map(|n| format!("($1, ${})", n + 2)).collect();
                    let query = format!(
                        "insert into counterparty_block (owner_id, blocked_company_id) values {}",
                        rows.join(", ")
                    );
                    let mut q = sqlx::query(sqlx::AssertSqlSafe(query)).bind(f.owner_id);
                    for c in &f.blocked {
                        q = q.bind(c.0);
                    }
                    q.execute(&mut *self.tx).await.map_err(map_err)?;
                }
                Ok(())
            }
        }

        #[async_trait]
        impl InstrumentRepo for $tx {
            async fn insert_instrument(&mut self, i: &Instrument) -> StoreResult<()> {
                sqlx::query(
                    "insert into instrument (instrument_id, name, term, description, min_quantity, tick_size, \
                     exchange_tick_size, exchange_id, exchange, exchange_iso_code, exchange_instrument_id, bbg_code, \
                     country, currency, min_tick_price, max_tick_price, active, is_sandbox, reversed_spread, \
                     created_at, updated_at, band_seen_at, prices_stale_after, prices_stale) \
                     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, \
                     $21, $22, $23, $24)",
                )
                .bind(i.instrument_id.0)
                .bind(&i.name)
                .bind(&i.term)
                .bind(&i.description)
                .bind(i.min_quantity)
                .bind(Dec(i.tick_size))
                .bind(i.exchange_tick_size.map(Dec))
                .bind(&i.exchange_id)
                .bind(&i.exchange)
                .bind(&i.exchange_iso_code)
                .bind(&i.exchange_instrument_id)
                .bind(&i.bbg_code)
                .bind(&i.country)
                .bind(&i.currency)
                .bind(Dec(i.min_tick_price))
                .bind(Dec(i.max_tick_price))
                .bind(i.active)
                .bind(i.is_sandbox)
                .bind(i.reversed_spread)
                .bind(Ts(i.created_at))
                .bind(Ts(i.updated_at))
                .bind(Ts(i.band_seen_at))
                .bind(i.prices_stale_after)
                .bind(i.prices_stale)
                .execute(&mut *self.tx)
                .await
                .map_err(map_err)?;
                Ok(())
            }

            async fn update_instrument(&mut self, i: &Instrument) -> StoreResult<()> {
                self.memo.blocks.remove(&i.instrument_id);
                sqlx::query(
                    "update instrument set name = $1, term = $2, description = $3, min_quantity = $4, tick_size = $5, \
                     exchange_tick_size = $6, exchange_id = $7, exchange = $8, exchange_iso_code = $9, \
                     exchange_instrument_id = $10, bbg_code = $11, country = $12, currency = $13, \
                     min_tick_price = $14, max_tick_price = $15, active = $16, is_sandbox = $17, \
                     reversed_spread = $18, updated_at = $19, band_seen_at = $21, prices_stale_after = $22, \
                     prices_stale = $23 where instrument_id = $20",
                )
                .bind(&i.name)
                .bind(&i.term)
                .bind(&i.description)
                .bind(i.min_quantity)
                .bind(Dec(i.tick_size))
                .bind(i.exchange_tick_size.map(Dec))
                .bind(&i.exchange_id)
                .bind(&i.exchange)
                .bind(&i.exchange_iso_code)
                .bind(&i.exchange_instrument_id)
                .bind(&i.bbg_code)
                .bind(&i.country)
                .bind(&i.currency)
                .bind(Dec(i.min_tick_price))
                .bind(Dec(i.max_tick_price))
                .bind(i.active)
                .bind(i.is_sandbox)
                .bind(i.reversed_spread)
                .bind(Ts(i.updated_at))
                .bind(i.instrument_id.0)
                .bind(Ts(i.band_seen_at))
                .bind(i.prices_stale_after)
                .bind(i.prices_stale)
                .execute(&mut *self.tx)
                .await
                .map_err(map_err)?;
                Ok(())
            }

            async fn instrument(&mut self, id: InstrumentId) -> StoreResult<Option<Instrument>> {
                Ok(sqlx::query_as::<_, InstrumentRow>("select * from instrument where instrument_id = $1")
                    .bind(id.0)
                    .fetch_optional(&mut *self.tx)
                    .await
                    .map_err(map_err)?
                    .map(InstrumentRow::into_model))
            }

            async fn lock_instrument(&mut self, id: InstrumentId) -> StoreResult<Option<Instrument>> {
                Ok(sqlx::query_as::<_, InstrumentRow>(sqlx::AssertSqlSafe(format!(
                    "select * from instrument where instrument_id = $1{FOR_NO_KEY_UPDATE}"
                )))
                .bind(id.0)
                .fetch_optional(&mut *self.tx)
                .await
                .map_err(map_err)?
                .map(InstrumentRow::into_model))
            }

            async fn record_band(&mut self, i: &Instrument, at: DateTime<Utc>) -> StoreResult<()> {
                sqlx::query(
                    "insert into band_history (instrument_id, at, min_tick_price, max_tick_price) \
                     values ($1, $2, $3, $4) on conflict (instrument_id, at) do update \
                     set min_tick_price = excluded.min_tick_price, max_tick_price = excluded.max_tick_price",
                )
                .bind(i.instrument_id.0)
                .bind(Ts(at))
                .bind(Dec(i.min_tick_price))
                .bind(Dec(i.max_tick_price))
                .execute(&mut *self.tx)
                .await
                .map_err(map_err)?;
                Ok(())
            }

            async fn band_history(
                &mut self,
                instrument: InstrumentId,
                from: DateTime<Utc>,
                to: DateTime<Utc>,
            ) -> StoreResult<Vec<(DateTime<Utc>, rust_decimal::Decimal, rust_decimal::Decimal)>> {
                let rows: Vec<(Ts, Dec, Dec)> = sqlx::query_as(
                    "select at, min_tick_price, max_tick_price from band_history where instrument_id = $1 \
                     and at <= $3 and at >= coalesce((select max(at) from band_history \
                     where instrument_id = $1 and at <= $2), $2) order by at",
                )
                .bind(instrument.0)
                .bind(Ts(from))
                .bind(Ts(to))
                .fetch_all(&mut *self.tx)
                .await
                .map_err(map_err)?;
                Ok(rows.into_iter().map(|(at, min, max)| (at.0, min.0, max.0)).collect())
            }

            async fn prune_band_history(&mut self, before: DateTime<Utc>) -> StoreResult<u64> {
                let done = sqlx::query(
                    "delete from band_history where at < $1 and at < (select max(b.at) from band_history b \
                     where b.instrument_id = band_history.instrument_id and b.at <= $1)",
                )
                .bind(Ts(before))
                .execute(&mut *self.tx)
                .await
                .map_err(map_err)?;
                Ok(done.rows_affected())
            }

            async fn insert_instrument_setting(&mut self, s: &InstrumentSetting) -> StoreResult<()> {
                sqlx::query(
                    "insert into instrument_setting (setting_id, instrument_id, effective_from, tick_size, \
                     exchange_tick_size, min_quantity, created_by, created_at, applied_at) \
                     values ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
                )
                .bind(s.setting_id)
                .bind(s.instrument_id.0)
                .bind(Ts(s.effective_from))
                .bind(Dec(s.tick_size))
                .bind(s.exchange_tick_size.map(Dec))
                .bind(s.min_quantity)
                .bind(s.created_by.map(|u| u.0))
                .bind(Ts(s.created_at))
                .bind(s.applied_at.map(Ts))
                .execute(&mut *self.tx)
                .await
                .map_err(map_err)?;
                Ok(())
            }

            async fn instrument_settings(&mut self, instrument: InstrumentId) -> StoreResult<Vec<InstrumentSetting>> {
                let rows: Vec<SettingRow> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
                    "{} where s.instrument_id = $1 order by s.effective_from desc, s.created_at desc",
                    sql::SETTINGS
                )))
                .bind(instrument.0)
                .fetch_all(&mut *self.tx)
                .await
                .map_err(map_err)?;
                Ok(rows.into_iter().map(setting).collect())
            }

            async fn instrument_setting(&mut self, id: Uuid) -> StoreResult<Option<InstrumentSetting>> {
                let row: Option<SettingRow> =
                    sqlx::query_as(sqlx::AssertSqlSafe(format!("{} where s.setting_id = $1", sql::SETTINGS)))
                        .bind(id)
                        .fetch_optional(&mut *self.tx)
                        .await
                        .map_err(map_err)?;
                Ok(row.map(setting))
            }

            async fn delete_instrument_setting(&mut self, id: Uuid) -> StoreResult<bool> {
                let done = sqlx::query("delete from instrument_setting where setting_id = $1 and applied_at is null")
                    .bind(id)
                    .execute(&mut *self.tx)
                    .await
                    .map_err(map_err)?;
                Ok(done.rows_affected() == 1)
            }

            async fn apply_instrument_setting(&mut self, id: Uuid, at: DateTime<Utc>) -> StoreResult<bool> {
                let done = sqlx::query(
                    "update instrument_setting set applied_at = $2 where setting_id = $1 and applied_at is null",
                )
                .bind(id)
                .bind(Ts(at))
                .execute(&mut *self.tx)
                .await
                .map_err(map_err)?;
                Ok(done.rows_affected() == 1)
            }

            async fn exchanges(&mut self) -> StoreResult<Vec<(Exchange, i64)>> {
                let rows: Vec<ExchangeRow> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
                    "{}, (select count(*) from instrument i where i.exchange_iso_code = e.mic) from exchange e \
                     order by e.mic",
                    sql::EXCHANGES
                )))
                .fetch_all(&mut *self.tx)
                .await
                .map_err(map_err)?;
                rows.into_iter().map(exchange_row).collect()
            }

            async fn exchange(&mut self, mic: &str) -> StoreResult<Option<Exchange>> {
                let row: Option<ExchangeRow> =
                    sqlx::query_as(sqlx::AssertSqlSafe(format!("{}, cast(0 as bigint) from exchange e where e.mic = $1", sql::EXCHANGES)))
                        .bind(mic)
                        .fetch_optional(&mut *self.tx)
                        .await
                        .map_err(map_err)?;
                row.map(|r| exchange_row(r).map(|(e, _)| e)).transpose()
            }

            async fn save_exchange(&mut self, e: &Exchange) -> StoreResult<()> {
                let c = &e.calendar;
                sqlx::query(
                    "insert into exchange (mic, name, time_zone, open_time, close_time, parent_orders_from, days, \
                     holidays, created_at, updated_at) values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) \
                     on conflict (mic) do update set name = excluded.name, time_zone = excluded.time_zone, \
                     open_time = excluded.open_time, close_time = excluded.close_time, \
                     parent_orders_from = excluded.parent_orders_from, days = excluded.days, \
                     holidays = excluded.holidays, updated_at = excluded.updated_at",
                )
                .bind(&e.mic)
                .bind(&e.name)
                .bind(c.time_zone.name())
                .bind(c.open.format("%H:%M").to_string())
                .bind(c.close.format("%H:%M").to_string())
                .bind(c.parent_orders_from.format("%H:%M").to_string())
                .bind(c.stored_days())
                .bind(c.stored_holidays())
                .bind(Ts(e.created_at))
                .bind(Ts(e.updated_at))
                .execute(&mut *self.tx)
                .await
                .map_err(map_err)?;
                Ok(())
            }

            async fn delete_exchange(&mut self, mic: &str) -> StoreResult<bool> {
                let done = sqlx::query("delete from exchange where mic = $1")
                    .bind(mic)
                    .execute(&mut *self.tx)
                    .await
                    .map_err(map_err)?;
                Ok(done.rows_affected() == 1)
            }

            async fn instruments(&mut self, f: &InstrumentFilter) -> StoreResult<Page<Instrument>> {
                let filter = format!(
                    "where ($1 is null or {STRPOS}(lower(name), lower($1)) > 0) and ($2 is null or exchange_id = $2) \
                     and ($3 is null or active = $3) and ($4 is null or is_sandbox = $4)"
                );
                let total_items: i64 =
                    sqlx::query_scalar(sqlx::AssertSqlSafe(format!("select count(*) from instrument {filter}")))
                        .bind(&f.name)
                        .bind(&f.exchange_id)
                        .bind(f.active)
                        .bind(f.is_sandbox)
                        .fetch_one(&mut *self.tx)
                        .await
                        .map_err(map_err)?;
                let dir = if f.descending { "desc" } else { "asc" };
                let query = format!(
                    "select * from instrument {filter} order by {} {dir}, instrument_id limit $5 offset $6",
                    f.sort.column()
                );
                let items = sqlx::query_as::<_, InstrumentRow>(sqlx::AssertSqlSafe(query))
                    .bind(&f.name)
                    .bind(&f.exchange_id)
                    .bind(f.active)
                    .bind(f.is_sandbox)
                    .bind(f.size)
                    .bind(f.page * f.size)
                    .fetch_all(&mut *self.tx)
                    .await
                    .map_err(map_err)?
                    .into_iter()
                    .map(InstrumentRow::into_model)
                    .collect();
                Ok(Page { items, total_items })
            }
        }

        #[async_trait]
        impl UserRepo for $tx {
            async fn insert_user(&mut self, u: &User) -> StoreResult<()> {
                self.memo.forget();
                sqlx::query(
                    "insert into app_user (user_id, company_id, email, first_name, last_name, roles, password_hash, \
                     active, verified, auto_accept, parent_order_limit_multiplier, ui_metadata, fix_integration, \
                     ems_trader_id, created_at, updated_at, cancel_on_disconnect) \
                     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)",
                )
                .bind(u.user_id.0)
                .bind(u.company_id.0)
                .bind(&u.email)
                .bind(&u.first_name)
                .bind(&u.last_name)
                .bind(Json(&u.roles))
                .bind(&u.password_hash)
                .bind(u.active)
                .bind(u.verified)
                .bind(u.auto_accept.map(|a| a.as_str()))
                .bind(u.parent_order_limit_multiplier)
                .bind(Json(&u.ui_metadata))
                .bind(u.fix_integration)
                .bind(&u.ems_trader_id)
                .bind(Ts(u.created_at))
                .bind(Ts(u.updated_at))
                .bind(u.cancel_on_disconnect)
                .execute(&mut *self.tx)
                .await
                .map_err(map_err)?;
                Ok(())
            }

            async fn update_user(&mut self, u: &User) -> StoreResult<()> {
                self.memo.forget();
                sqlx::query(
                    "update app_user set email = $1, first_name = $2, last_name = $3, roles = $4, password_hash = $5, \
                     active = $6, verified = $7, auto_accept = $8, parent_order_limit_multiplier = $9, \
                     ui_metadata = $10, fix_integration = $11, ems_trader_id = $12, updated_at = $13, \
                     cancel_on_disconnect = $15 where user_id = $14",
                )
                .bind(&u.email)
                .bind(&u.first_name)
                .bind(&u.last_name)
                .bind(Json(&u.roles))
                .bind(&u.password_hash)
                .bind(u.active)
                .bind(u.verified)
                .bind(u.auto_accept.map(|a| a.as_str()))
                .bind(u.parent_order_limit_multiplier)
                .bind(Json(&u.ui_metadata))
                .bind(u.fix_integration)
                .bind(&u.ems_trader_id)
                .bind(Ts(u.updated_at))
                .bind(u.user_id.0)
                .bind(u.cancel_on_disconnect)
                .execute(&mut *self.tx)
                .await
                .map_err(map_err)?;
                Ok(())
            }

            async fn renew_presence(&mut self, node: &str, holders: &[Holder], until: DateTime<Utc>) -> StoreResult<()> {
                // A statement per 500 holders (1,002 parameters).
                for chunk in holders.chunks(500) {
                    let rows: Vec<String> =
                        (0..chunk.len()).map(|n| format!("(${}, ${}, $1, $2)", 3 + 2 * n, 4 + 2 * n)).collect();
                    let query = format!(
                        "insert into presence (holder_kind, holder_id, node_id, until) values {} \
                         on conflict (holder_kind, holder_id, node_id) do update set until = excluded.until",
                        rows.join(", ")
                    );
                    let mut q = sqlx::query(sqlx::AssertSqlSafe(query)).bind(node).bind(Ts(until));
                    for h in chunk {
                        let (kind, id) = h.parts();
                        q = q.bind(kind).bind(id);
                    }
                    q.execute(&mut *self.tx).await.map_err(map_err)?;
                }
                Ok(())
            }

            async fn release_presence(&mut self, node: &str, holders: &[Holder], at: DateTime<Utc>) -> StoreResult<()> {
                for h in holders {
                    let (kind, id) = h.parts();
                    sqlx::query(
                        "update presence set until = $4 where holder_kind = $1 and holder_id = $2 and node_id = $3",
                    )
                    .bind(kind)
                    .bind(id)
                    .bind(node)
                    .bind(Ts(at))
                    .execute(&mut *self.tx)
                    .await
                    .map_err(map_err)?;
                }
                Ok(())
            }

            async fn hold_lease(
                &mut self,
                name: &str,
                node: &str,
                now: DateTime<Utc>,
                until: DateTime<Utc>,
            ) -> StoreResult<bool> {
                let r = sqlx::query(
                    "insert into lease (name, node_id, until) values ($1, $2, $4) on conflict (name) do update \
                     set node_id = excluded.node_id, until = excluded.until \
                     where lease.node_id = excluded.node_id or lease.until < $3",
                )
                .bind(name)
                .bind(node)
                .bind(Ts(now))
                .bind(Ts(until))
                .execute(&mut *self.tx)
                .await
                .map_err(map_err)?;
                Ok(r.rows_affected() == 1)
            }

            async fn save_market_data_session(&mut self, s: &MarketDataSession) -> StoreResult<()> {
                sqlx::query(
                    "insert into market_data_session (id, node_id, provider, sender_comp_id, target_comp_id, \
                     logged_on, since, last_price_at, symbols, updated_at) \
                     values (1, $1, $2, $3, $4, $5, $6, $7, $8, $9) on conflict (id) do update \
                     set node_id = excluded.node_id, provider = excluded.provider, \
                     sender_comp_id = excluded.sender_comp_id, target_comp_id = excluded.target_comp_id, \
                     logged_on = excluded.logged_on, since = excluded.since, last_price_at = excluded.last_price_at, \
                     symbols = excluded.symbols, updated_at = excluded.updated_at",
                )
                .bind(&s.node_id)
                .bind(&s.provider)
                .bind(&s.sender_comp_id)
                .bind(&s.target_comp_id)
                .bind(s.logged_on)
                .bind(Ts(s.since))
                .bind(s.last_price_at.map(Ts))
                .bind(s.symbols)
                .bind(Ts(s.updated_at))
                .execute(&mut *self.tx)
                .await
                .map_err(map_err)?;
                Ok(())
            }

            async fn market_data_session(
                &mut self,
                lease: &str,
                now: DateTime<Utc>,
            ) -> StoreResult<Option<(MarketDataSession, bool, i64)>> {
                let row: Option<MarketDataRow> = sqlx::query_as(
                    "select m.node_id, m.provider, m.sender_comp_id, m.target_comp_id, m.logged_on, m.since, \
                     m.last_price_at, m.symbols, m.updated_at, \
                     exists (select 1 from lease l where l.name = $1 and l.node_id = m.node_id and l.until >= $2) \
                     as held, (select count(*) from instrument where prices_stale) as stale \
                     from market_data_session m where m.id = 1",
                )
                .bind(lease)
                .bind(Ts(now))
                .fetch_optional(&mut *self.tx)
                .await
                .map_err(map_err)?;
                Ok(row.map(market_data_row))
            }

            async fn release_lease(&mut self, name: &str, node: &str) -> StoreResult<()> {
                sqlx::query("delete from lease where name = $1 and node_id = $2")
                    .bind(name)
                    .bind(node)
                    .execute(&mut *self.tx)
                    .await
                    .map_err(map_err)?;
                Ok(())
            }

            async fn take_lapsed_presence(&mut self, now: DateTime<Utc>) -> StoreResult<Vec<(Holder, DateTime<Utc>)>> {
                let rows: Vec<(String, Uuid, Ts)> =
                    sqlx::query_as("delete from presence where until <= $1 returning holder_kind, holder_id, until")
                        .bind(Ts(now))
                        .fetch_all(&mut *self.tx)
                        .await
                        .map_err(map_err)?;
                rows.into_iter()
                    .map(|(kind, id, t)| {
                        let holder = Holder::from_parts(&kind, id)
                            .ok_or_else(|| StoreError::Other(format!("a presence lease of kind {kind}")))?;
                        Ok((holder, t.0))
                    })
                    .collect()
            }

            async fn present(&mut self, holder: Holder, now: DateTime<Utc>) -> StoreResult<bool> {
                let (kind, id) = holder.parts();
                let n: i64 = sqlx::query_scalar(
                    "select count(*) from presence where holder_kind = $1 and holder_id = $2 and until > $3",
                )
                .bind(kind)
                .bind(id)
                .bind(Ts(now))
                .fetch_one(&mut *self.tx)
                .await
                .map_err(map_err)?;
                Ok(n > 0)
            }

            async fn user(&mut self, id: UserId) -> StoreResult<Option<UserView>> {
                let in_tx = matches!(self.tx, Conn::Tx(_));
                if let Some(known) = self.memo.users.get(&id).filter(|_| in_tx) {
                    return Ok(known.clone());
                }
                let user = sqlx::query_as::<_, UserRow>(sqlx::AssertSqlSafe(format!("{} where u.user_id = $1", sql::USER_SELECT)))
                    .bind(id.0)
                    .fetch_optional(&mut *self.tx)
                    .await
                    .map_err(map_err)?
                    .map(UserRow::into_model)
                    .transpose()?;
                if in_tx {
                    self.memo.users.insert(id, user.clone());
                }
                Ok(user)
            }

            async fn user_by_email(&mut self, email: &str) -> StoreResult<Option<UserView>> {
                sqlx::query_as::<_, UserRow>(sqlx::AssertSqlSafe(format!("{} where u.email = $1", sql::USER_SELECT)))
                    .bind(email)
                    .fetch_optional(&mut *self.tx)
                    .await
                    .map_err(map_err)?
                    .map(UserRow::into_model)
                    .transpose()
            }

            async fn users(&mut self, f: &UserFilter) -> StoreResult<Page<UserView>> {
                let filter = format!(
                    "where ($1 is null or {STRPOS}(u.email, lower($1)) > 0) and ($2 is null or u.company_id = $2) \
                     and ($3 is null or u.active = $3)"
                );
                let total_items: i64 =
                    sqlx::query_scalar(sqlx::AssertSqlSafe(format!("select count(*) from app_user u {filter}")))
                        .bind(&f.email)
                        .bind(f.company_id.map(|c| c.0))
                        .bind(f.active)
                        .fetch_one(&mut *self.tx)
                        .await
                        .map_err(map_err)?;
                let rows = sqlx::query_as::<_, UserRow>(sqlx::AssertSqlSafe(format!(
                    "{} {filter} order by u.email limit $4 offset $5",
                    sql::USER_SELECT
                )))
                .bind(&f.email)
                .bind(f.company_id.map(|c| c.0))
                .bind(f.active)
                .bind(f.size)
                .bind(f.page * f.size)
                .fetch_all(&mut *self.tx)
                .await
                .map_err(map_err)?;
                Ok(Page { items: convert(rows, UserRow::into_model)?, total_items })
            }
        }

        #[async_trait]
        impl SessionRepo for $tx {
            async fn insert_session(&mut self, s: &Session) -> StoreResult<()> {
                sqlx::query(
                    "insert into session (session_id, user_id, token_hash, created_at, expires_at) \
                     values ($1, $2, $3, $4, $5)",
                )
                .bind(s.session_id.0)
                .bind(s.user_id.0)
                .bind(&s.token_hash)
                .bind(Ts(s.created_at))
                .bind(Ts(s.expires_at))
                .execute(&mut *self.tx)
                .await
                .map_err(map_err)?;
                Ok(())
            }

            async fn session_user(&mut self, token_hash: &str) -> StoreResult<Option<(Session, UserView)>> {
                sqlx::query_as::<_, SessionUserRow>(
                    "select u.*, c.name as company_name, s.session_id as s_session_id, \
                     s.token_hash as s_token_hash, s.created_at as s_created_at, s.expires_at as s_expires_at \
                     from session s join app_user u on u.user_id = s.user_id \
                     join company c on c.company_id = u.company_id where s.token_hash = $1",
                )
                .bind(token_hash)
                .fetch_optional(&mut *self.tx)
                .await
                .map_err(map_err)?
                .map(SessionUserRow::into_model)
                .transpose()
            }

            async fn delete_session(&mut self, id: SessionId) -> StoreResult<()> {
                sqlx::query("delete from session where session_id = $1")
                    .bind(id.0)
                    .execute(&mut *self.tx)
                    .await
                    .map_err(map_err)?;
                Ok(())
            }

            async fn delete_sessions_of_user(&mut self, user: UserId) -> StoreResult<u64> {
                let r = sqlx::query("delete from session where user_id = $1")
                    .bind(user.0)
                    .execute(&mut *self.tx)
                    .await
                    .map_err(map_err)?;
                Ok(r.rows_affected())
            }

            async fn delete_expired_sessions(&mut self, now: DateTime<Utc>) -> StoreResult<u64> {
                let r = sqlx::query("delete from session where expires_at <= $1")
                    .bind(Ts(now))
                    .execute(&mut *self.tx)
                    .await
                    .map_err(map_err)?;
                Ok(r.rows_affected())
            }
        }

        #[async_trait]
        impl LinkTokenRepo for $tx {
            async fn insert_link_token(&mut self, t: &LinkToken) -> StoreResult<()> {
                sqlx::query(
                    "insert into link_token (token_hash, user_id, purpose, created_at, expires_at, used_at) \
                     values ($1, $2, $3, $4, $5, $6)",
                )
                .bind(&t.token_hash)
                .bind(t.user_id.0)
                .bind(t.purpose.as_str())
                .bind(Ts(t.created_at))
                .bind(Ts(t.expires_at))
                .bind(t.used_at.map(Ts))
                .execute(&mut *self.tx)
                .await
                .map_err(map_err)?;
                Ok(())
            }

            async fn link_token(&mut self, token_hash: &str) -> StoreResult<Option<LinkToken>> {
                sqlx::query_as::<_, LinkTokenRow>("select * from link_token where token_hash = $1")
                    .bind(token_hash)
                    .fetch_optional(&mut *self.tx)
                    .await
                    .map_err(map_err)?
                    .map(LinkTokenRow::into_model)
                    .transpose()
            }

            async fn claim_link_token(
                &mut self,
                token_hash: &str,
                now: DateTime<Utc>,
                purpose: Option<LinkPurpose>,
            ) -> StoreResult<Option<LinkToken>> {
                sqlx::query_as::<_, LinkTokenRow>(
                    "update link_token set used_at = $1 where token_hash = $2 and used_at is null \
                     and expires_at > $1 and ($3 is null or purpose = $3) returning *",
                )
                .bind(Ts(now))
                .bind(token_hash)
                .bind(purpose.map(LinkPurpose::as_str))
                .fetch_optional(&mut *self.tx)
                .await
                .map_err(map_err)?
                .map(LinkTokenRow::into_model)
                .transpose()
            }

            async fn use_link_tokens_of_user(&mut self, user: UserId, now: DateTime<Utc>) -> StoreResult<u64> {
                let r = sqlx::query("update link_token set used_at = $1 where user_id = $2 and used_at is null")
                    .bind(Ts(now))
                    .bind(user.0)
                    .execute(&mut *self.tx)
                    .await
                    .map_err(map_err)?;
                Ok(r.rows_affected())
            }

            async fn delete_stale_link_tokens(&mut self, before: DateTime<Utc>) -> StoreResult<u64> {
                let r = sqlx::query("delete from link_token where expires_at <= $1 or used_at <= $1")
                    .bind(Ts(before))
                    .execute(&mut *self.tx)
                    .await
                    .map_err(map_err)?;
                Ok(r.rows_affected())
            }
        }

        #[async_trait]
        impl AuditRepo for $tx {
            async fn insert_action_log(&mut self, a: &ActionLog) -> StoreResult<()> {
                bind_action_log(sqlx::query(sql::INSERT_ACTION_LOG), a)
                .execute(&mut *self.tx)
                .await
                .map_err(map_err)?;
                Ok(())
            }

            async fn keyed_writes(&mut self, user: UserId, key: &str) -> StoreResult<Vec<KeyedWrite>> {
                let rows: Vec<(String, Option<Uuid>, String)> = sqlx::query_as(
                    "select entity, entity_id, request_hash from action_log \
                     where user_id = $1 and idempotency_key = $2 order by idempotency_part",
                )
                .bind(user.0)
                .bind(key)
                .fetch_all(&mut *self.tx)
                .await
                .map_err(map_err)?;
                Ok(rows
                    .into_iter()
                    .map(|(entity, entity_id, request_hash)| KeyedWrite { entity, entity_id, request_hash })
                    .collect())
            }

            async fn action_logs(&mut self, limit: i64) -> StoreResult<Vec<ActionLog>> {
                Ok(sqlx::query_as::<_, ActionLogRow>(
                    "select * from action_log order by created_at desc, action_log_id desc limit $1",
                )
                .bind(limit)
                .fetch_all(&mut *self.tx)
                .await
                .map_err(map_err)?
                .into_iter()
                .map(ActionLogRow::into_model)
                .collect())
            }

            async fn action_log_page(&mut self, f: &ActionLogFilter) -> StoreResult<Page<ActionLogEntry>> {
                // Its parameters are `$1`–`$7`, as `bind_action_log_filter` binds them.
                let filter = format!(
                    "where ($1 is null or {STRPOS}(u.email, lower($1)) > 0) and ($2 is null or a.entity = $2) \
                     and ($3 is null or a.operation = $3) and ($4 is null or u.company_id = $4) \
                     and ($5 is null or a.created_at >= $5) and ($6 is null or a.created_at < $6) \
                     and not ($7 and a.user_id is null and a.entity = 'instrument' and a.operation = 'band')"
                );
                let unfiltered = f.email.is_none()
                    && f.entity.is_none()
                    && f.operation.is_none()
                    && f.company_id.is_none()
                    && f.from.is_none()
                    && f.until.is_none()
                    && !f.without_automatic_band_moves;
                // Unfiltered, the count needs no join (every page of the whole log asks for it).
                let total_items: i64 = if unfiltered {
                    sqlx::query_scalar("select count(*) from action_log").fetch_one(&mut *self.tx).await
                } else {
                    let count = format!(
                        "select count(*) from action_log a left join app_user u on u.user_id = a.user_id {filter}"
                    );
                    bind_action_log_filter(sqlx::query_as::<_, (i64,)>(sqlx::AssertSqlSafe(count)), f)
                        .fetch_one(&mut *self.tx)
                        .await
                        .map(|(n,)| n)
                }
                .map_err(map_err)?;
                let query = format!(
                    "{} {filter} order by {} limit $8 offset $9",
                    sql::ACTION_LOG_SELECT,
                    sql::action_log_order(f.sort, f.descending)
                );
                let items = bind_action_log_filter(sqlx::query_as::<_, ActionLogEntryRow>(sqlx::AssertSqlSafe(query)), f)
                    .bind(f.size)
                    .bind(f.page.saturating_mul(f.size))
                    .fetch_all(&mut *self.tx)
                    .await
                    .map_err(map_err)?
                    .into_iter()
                    .map(ActionLogEntryRow::into_model)
                    .collect();
                Ok(Page { items, total_items })
            }
        }

        impl $tx {
            /// The newsletters of `rows` with their recipients, by e-mail.
            async fn with_recipients(&mut self, rows: Vec<NewsletterRow>) -> StoreResult<Vec<Newsletter>> {
                let mut out: Vec<Newsletter> = rows.into_iter().map(NewsletterRow::into_model).collect();
                if out.is_empty() {
                    return Ok(out);
                }
                let query = format!(
                    "{} where r.newsletter_id in ({}) order by u.email",
                    sql::NEWSLETTER_RECIPIENTS,
                    sql::placeholders(1, out.len())
                );
                let mut q = sqlx::query_as::<_, NewsletterRecipientRow>(sqlx::AssertSqlSafe(query));
                for n in &out {
                    q = q.bind(n.newsletter_id);
                }
                for r in q.fetch_all(&mut *self.tx).await.map_err(map_err)? {
                    if let Some(n) = out.iter_mut().find(|n| n.newsletter_id == r.newsletter_id) {
                        n.recipients.push(r.into_model());
                    }
                }
                Ok(out)
            }
        }

        #[async_trait]
        impl NewsletterRepo for $tx {
            async fn insert_newsletter(&mut self, n: &Newsletter) -> StoreResult<()> {
                sqlx::query(
                    "insert into newsletter (newsletter_id, name, description, filter_criteria, created_at, \
                     updated_at, last_sent_at, company_id) values ($1, $2, $3, $4, $5, $6, $7, $8)",
                )
                .bind(n.newsletter_id)
                .bind(&n.name)
                .bind(&n.description)
                .bind(n.filter_criteria.as_ref().map(Json))
                .bind(Ts(n.created_at))
                .bind(Ts(n.updated_at))
                .bind(n.last_sent_at.map(Ts))
                .bind(n.company_id.map(|c| c.0))
                .execute(&mut *self.tx)
                .await
                .map_err(map_err)?;
                Ok(())
            }

            async fn newsletters(&mut self, company: Option<CompanyId>) -> StoreResult<Vec<Newsletter>> {
                let rows = sqlx::query_as::<_, NewsletterRow>(
                    "select * from newsletter where $1 is null or company_id = $1 \
                     order by created_at desc, newsletter_id desc",
                )
                .bind(company.map(|c| c.0))
                .fetch_all(&mut *self.tx)
                .await
                .map_err(map_err)?;
                self.with_recipients(rows).await
            }

            async fn newsletter(&mut self, id: Uuid) -> StoreResult<Option<Newsletter>> {
                let rows = sqlx::query_as::<_, NewsletterRow>("select * from newsletter where newsletter_id = $1")
                    .bind(id)
                    .fetch_all(&mut *self.tx)
                    .await
                    .map_err(map_err)?;
                Ok(self.with_recipients(rows).await?.pop())
            }

            async fn add_newsletter_recipients(
                &mut self,
                id: Uuid,
                users: &[UserId],
                at: DateTime<Utc>,
            ) -> StoreResult<u64> {
                let mut added = 0;
                for u in users {
                    added += sqlx::query(
                        "insert into newsletter_recipient (newsletter_id, user_id, added_at) values ($1, $2, $3) \
                         on conflict (newsletter_id, user_id) do nothing",
                    )
                    .bind(id)
                    .bind(u.0)
                    .bind(Ts(at))
                    .execute(&mut *self.tx)
                    .await
                    .map_err(map_err)?
                    .rows_affected();
                }
                sqlx::query("update newsletter set updated_at = $1 where newsletter_id = $2")
                    .bind(Ts(at))
                    .bind(id)
                    .execute(&mut *self.tx)
                    .await
                    .map_err(map_err)?;
                Ok(added)
            }

            async fn remove_newsletter_recipient(&mut self, id: Uuid, user: UserId) -> StoreResult<bool> {
                let r = sqlx::query("delete from newsletter_recipient where newsletter_id = $1 and user_id = $2")
                    .bind(id)
                    .bind(user.0)
                    .execute(&mut *self.tx)
                    .await
                    .map_err(map_err)?;
                Ok(r.rows_affected() == 1)
            }

            async fn mark_newsletter_sent(&mut self, id: Uuid, at: DateTime<Utc>) -> StoreResult<()> {
                sqlx::query("update newsletter set last_sent_at = $1 where newsletter_id = $2")
                    .bind(Ts(at))
                    .bind(id)
                    .execute(&mut *self.tx)
                    .await
                    .map_err(map_err)?;
                Ok(())
            }
        }

        #[async_trait]
        impl OutboxRepo for $tx {
            async fn insert_outbox(&mut self, m: &OutboxMessage) -> StoreResult<()> {
                bind_outbox(sqlx::query(sql::INSERT_OUTBOX), m).execute(&mut *self.tx).await.map_err(map_err)?;
                Ok(())
            }

            async fn outbox(&mut self, id: Uuid) -> StoreResult<Option<OutboxMessage>> {
                Ok(sqlx::query_as::<_, OutboxRow>("select * from outbox where outbox_id = $1")
                    .bind(id)
                    .fetch_optional(&mut *self.tx)
                    .await
                    .map_err(map_err)?
                    .map(OutboxRow::into_model))
            }

            async fn mark_outbox_sent(
                &mut self,
                id: Uuid,
                at: DateTime<Utc>,
                redacted: &OutgoingEmail,
            ) -> StoreResult<()> {
                sqlx::query(
                    "update outbox set sent_at = $1, payload = $2, attempts = attempts + 1, last_error = null \
                     where outbox_id = $3",
                )
                .bind(Ts(at))
                .bind(Json(redacted))
                .bind(id)
                .execute(&mut *self.tx)
                .await
                .map_err(map_err)?;
                Ok(())
            }

            async fn record_outbox_failure(&mut self, id: Uuid, error: &str) -> StoreResult<()> {
                sqlx::query("update outbox set attempts = attempts + 1, last_error = $1 where outbox_id = $2")
                    .bind(error)
                    .bind(id)
                    .execute(&mut *self.tx)
                    .await
                    .map_err(map_err)?;
                Ok(())
            }

            async fn outbox_messages(&mut self, page: i64, size: i64) -> StoreResult<Page<OutboxMessage>> {
                let total_items: i64 =
                    sqlx::query_scalar("select count(*) from outbox").fetch_one(&mut *self.tx).await.map_err(map_err)?;
                let items = sqlx::query_as::<_, OutboxRow>(
                    "select * from outbox order by created_at desc, outbox_id desc limit $1 offset $2",
                )
                .bind(size)
                .bind(page.saturating_mul(size))
                .fetch_all(&mut *self.tx)
                .await
                .map_err(map_err)?
                .into_iter()
                .map(OutboxRow::into_model)
                .collect();
                Ok(Page { items, total_items })
            }
        }

        #[async_trait]
        impl TimerRepo for $tx {
            async fn backlog(&mut self, now: DateTime<Utc>) -> StoreResult<Backlog> {
                Ok(sqlx::query_as::<_, BacklogRow>(
                    "select (select count(*) from outbox where sent_at is null) as emails, \
                     (select min(created_at) from outbox where sent_at is null) as oldest_email, \
                     (select count(*) from fix_outbox where sent_seq is null) as fix_messages, \
                     (select min(created_at) from fix_outbox where sent_seq is null) as oldest_fix_message, \
                     (select count(*) from timer where due_at <= $1) as timers_due, \
                     (select min(due_at) from timer where due_at <= $1) as oldest_due, \
                     (select count(*) from instrument where prices_stale) as stale_instruments",
                )
                .bind(Ts(now))
                .fetch_one(&mut *self.tx)
                .await
                .map_err(map_err)?
                .into_model())
            }

            async fn insert_timer(&mut self, t: &Timer) -> StoreResult<bool> {
                if !self.remember_timer(t) {
                    return Ok(false);
                }
                let r = bind_timer(sqlx::query(sql::INSERT_TIMER), t).execute(&mut *self.tx).await.map_err(map_err)?;
                Ok(r.rows_affected() == 1)
            }

            async fn postpone_timer(&mut self, dedupe_key: &str, due_at: DateTime<Utc>) -> StoreResult<()> {
                self.shift_timer("update timer set due_at = $2 where dedupe_key = $1 and due_at < $2", dedupe_key, due_at)
                    .await
            }

            async fn delete_timers_of(&mut self, dedupe_key: &str) -> StoreResult<()> {
                sqlx::query("delete from timer where dedupe_key = $1")
                    .bind(dedupe_key)
                    .execute(&mut *self.tx)
                    .await
                    .map_err(map_err)?;
                Ok(())
            }

            async fn advance_timer(&mut self, dedupe_key: &str, due_at: DateTime<Utc>) -> StoreResult<()> {
                self.shift_timer("update timer set due_at = $2 where dedupe_key = $1 and due_at > $2", dedupe_key, due_at)
                    .await
            }

            async fn claim_due_timers(
                &mut self,
                now: DateTime<Utc>,
                lease_until: DateTime<Utc>,
                limit: i64,
                kinds: &[&str],
            ) -> StoreResult<Vec<Timer>> {
                if kinds.is_empty() {
                    return Ok(vec![]);
                }
                // PostgreSQL skips rows another node holds; SQLite's write transaction
                // holds its only write lock, so nobody claims between select and update.
                let query = format!(
                    "update timer set locked_until = $1, attempts = attempts + 1 where timer_id in \
                     (select timer_id from timer where due_at <= $2 and (locked_until is null or locked_until <= $2) \
                      and kind in ({}) order by due_at limit $3{SKIP_LOCKED}) returning *",
                    sql::placeholders(4, kinds.len())
                );
                let mut q = sqlx::query_as::<_, TimerRow>(sqlx::AssertSqlSafe(query))
                    .bind(Ts(lease_until))
                    .bind(Ts(now))
                    .bind(limit);
                for k in kinds {
                    q = q.bind(*k);
                }
                // `returning` keeps no order: the due order is the one to run them in (a
                // late close before the expiries due after it).
                let mut claimed: Vec<Timer> =
                    q.fetch_all(&mut *self.tx).await.map_err(map_err)?.into_iter().map(TimerRow::into_model).collect();
                claimed.sort_by_key(|t| (t.due_at, t.timer_id));
                Ok(claimed)
            }

            async fn renew_timer_lease(
                &mut self,
                id: Uuid,
                attempts: i32,
                lease_until: DateTime<Utc>,
            ) -> StoreResult<bool> {
                let r = sqlx::query("update timer set locked_until = $1 where timer_id = $2 and attempts = $3")
                    .bind(Ts(lease_until))
                    .bind(id)
                    .bind(attempts)
                    .execute(&mut *self.tx)
                    .await
                    .map_err(map_err)?;
                Ok(r.rows_affected() == 1)
            }

            async fn delete_timer(&mut self, id: Uuid) -> StoreResult<()> {
                // Its dedupe key may be free again.
                self.memo.timers.clear();
                sqlx::query("delete from timer where timer_id = $1")
                    .bind(id)
                    .execute(&mut *self.tx)
                    .await
                    .map_err(map_err)?;
                Ok(())
            }

            async fn reschedule_timer(&mut self, id: Uuid, due_at: DateTime<Utc>) -> StoreResult<()> {
                sqlx::query("update timer set due_at = $1, locked_until = null where timer_id = $2")
                    .bind(Ts(due_at))
                    .bind(id)
                    .execute(&mut *self.tx)
                    .await
                    .map_err(map_err)?;
                Ok(())
            }

            async fn pending_timers(&mut self) -> StoreResult<Vec<Timer>> {
                Ok(sqlx::query_as::<_, TimerRow>("select * from timer order by due_at")
                    .fetch_all(&mut *self.tx)
                    .await
                    .map_err(map_err)?
                    .into_iter()
                    .map(TimerRow::into_model)
                    .collect())
            }

            async fn bring_forward(&mut self, kind: &str, now: DateTime<Utc>) -> StoreResult<u64> {
                let r = sqlx::query(
                    "update timer set due_at = $1 where kind = $2 and due_at > $1 \
                     and (locked_until is null or locked_until <= $1)",
                )
                .bind(Ts(now))
                .bind(kind)
                .execute(&mut *self.tx)
                .await
                .map_err(map_err)?;
                Ok(r.rows_affected())
            }
        }

        impl $tx {
            /// What `o` adds to its book level (the domain's rule): a resting iceberg by
            /// the block this transaction holds ([`OrderRepo::hold_block`], ADR 0057); any
            /// other order shows the same whatever the block.
            async fn shown(&mut self, o: &ChildOrder) -> StoreResult<i64> {
                let block = if o.shows_by_block() { self.hold_block(o.instrument_id).await? } else { 0 };
                Ok(o.shown(block))
            }

            /// Parent orders by id in one statement (per thousand), in id order, `lock` appended.
            async fn parent_orders_in(
                &mut self,
                ids: &std::collections::BTreeSet<ParentOrderId>,
                lock: &str,
            ) -> StoreResult<Vec<ParentOrderView>> {
                // In chunks of ids ascending (a close may name more parents than a statement
                // takes parameters), so that the locks are still taken in id order.
                let ids: Vec<_> = ids.iter().collect();
                let mut out = Vec::with_capacity(ids.len());
                for chunk in ids.chunks(1000) {
                    let sql = format!(
                        "select * from parent_order where parent_order_id in ({}) order by parent_order_id{lock}",
                        sql::placeholders(1, chunk.len())
                    );
                    let mut query = sqlx::query_as::<_, ParentOrderRow>(sqlx::AssertSqlSafe(sql));
                    for id in chunk {
                        query = query.bind(id.0);
                    }
                    for row in query.fetch_all(&mut *self.tx).await.map_err(map_err)? {
                        out.push(row.into_model()?);
                    }
                }
                Ok(out)
            }
        }

        #[async_trait]
        impl OrderRepo for $tx {
            async fn lock_parent_order(&mut self, id: ParentOrderId) -> StoreResult<Option<ParentOrderView>> {
                // SQLite: the write transaction already holds the only write lock.
                sqlx::query_as::<_, ParentOrderRow>(sqlx::AssertSqlSafe(format!(
                    "select * from parent_order where parent_order_id = $1{FOR_UPDATE}"
                )))
                .bind(id.0)
                .fetch_optional(&mut *self.tx)
                .await
                .map_err(map_err)?
                .map(ParentOrderRow::into_model)
                .transpose()
            }

            async fn lock_parent_orders(&mut self, ids: &std::collections::BTreeSet<ParentOrderId>) -> StoreResult<Vec<ParentOrderView>> {
                self.parent_orders_in(ids, FOR_UPDATE).await
            }

            async fn parent_orders_by_id(&mut self, ids: &std::collections::BTreeSet<ParentOrderId>) -> StoreResult<Vec<ParentOrderView>> {
                self.parent_orders_in(ids, "").await
            }
            async fn lock_take_parents(
                &mut self,
                company: CompanyId,
                own: ParentOrderId,
                others: &std::collections::BTreeSet<ParentOrderId>,
            ) -> StoreResult<Vec<ParentOrderView>> {
                let others_clause = if others.is_empty() {
                    String::new()
                } else {
                    format!(" or (company_id <> $2 and parent_order_id in ({}))", sql::placeholders(3, others.len()))
                };
                let sql = format!(
                    "select * from parent_order where (parent_order_id = $1 and company_id = $2){others_clause} \
                     order by parent_order_id{FOR_UPDATE}"
                );
                let mut query = sqlx::query_as::<_, ParentOrderRow>(sqlx::AssertSqlSafe(sql)).bind(own.0).bind(company.0);
                for id in others {
                    query = query.bind(id.0);
                }
                query.fetch_all(&mut *self.tx).await.map_err(map_err)?.into_iter().map(ParentOrderRow::into_model).collect()
            }

            async fn lock_parents_of_match_request(&mut self, id: MatchRequestId) -> StoreResult<Vec<ParentOrderView>> {
                sqlx::query_as::<_, ParentOrderRow>(sqlx::AssertSqlSafe(format!(
                    "select * from parent_order where parent_order_id in \
                     (select c.parent_order_id from match_request m join child_order c \
                      on c.order_id in (m.requesting_order_id, m.responding_order_id) where m.match_request_id = $1) \
                     order by parent_order_id{FOR_UPDATE}"
                )))
                .bind(id.0)
                .fetch_all(&mut *self.tx)
                .await
                .map_err(map_err)?
                .into_iter()
                .map(ParentOrderRow::into_model)
                .collect()
            }

            async fn insert_parent_order(&mut self, p: &ParentOrder) -> StoreResult<()> {
                sqlx::query(
                    "insert into parent_order (parent_order_id, company_id, created_by, instrument_id, direction, \
                     quantity, broker_instructions, state, created_at, updated_at, min_execution) \
                     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
                )
                .bind(p.parent_order_id.0)
                .bind(p.company_id.0)
                .bind(p.created_by.0)
                .bind(p.instrument_id.0)
                .bind(p.direction.as_str())
                .bind(p.quantity)
                .bind(&p.broker_instructions)
                .bind(p.state.as_str())
                .bind(Ts(p.created_at))
                .bind(Ts(p.updated_at))
                .bind(p.min_execution)
                .execute(&mut *self.tx)
                .await
                .map_err(map_err)?;
                Ok(())
            }

            async fn update_parent_order_state(
                &mut self,
                id: ParentOrderId,
                state: ParentState,
                at: DateTime<Utc>,
            ) -> StoreResult<()> {
                sqlx::query("update parent_order set state = $1, updated_at = $2 where parent_order_id = $3")
                    .bind(state.as_str())
                    .bind(Ts(at))
                    .bind(id.0)
                    .execute(&mut *self.tx)
                    .await
                    .map_err(map_err)?;
                Ok(())
            }

            async fn update_parent_order_states(
                &mut self,
                changes: &[(ParentOrderId, ParentState)],
                at: DateTime<Utc>,
            ) -> StoreResult<()> {
                if changes.is_empty() {
                    return Ok(());
                }
                let n = changes.len();
                let cases = (0..n).map(|i| format!("when ${} then ${}", 2 * i + 1, 2 * i + 2)).collect::<Vec<_>>().join(" ");
                let sql = format!(
                    "update parent_order set state = case parent_order_id {cases} end, updated_at = ${} \
                     where parent_order_id in ({})",
                    2 * n + 1,
                    sql::placeholders(2 * n + 2, n)
                );
                let mut query = sqlx::query(sqlx::AssertSqlSafe(sql));
                for (id, state) in changes {
                    query = query.bind(id.0).bind(state.as_str());
                }
                query = query.bind(Ts(at));
                for (id, _) in changes {
                    query = query.bind(id.0);
                }
                query.execute(&mut *self.tx).await.map_err(map_err)?;
                Ok(())
            }

            async fn parent_order(&mut self, id: ParentOrderId) -> StoreResult<Option<ParentOrderView>> {
                sqlx::query_as::<_, ParentOrderRow>("select * from parent_order where parent_order_id = $1")
                    .bind(id.0)
                    .fetch_optional(&mut *self.tx)
                    .await
                    .map_err(map_err)?
                    .map(ParentOrderRow::into_model)
                    .transpose()
            }

            async fn parent_orders(
                &mut self,
                company: CompanyId,
                states: &[ParentState],
            ) -> StoreResult<Vec<ParentOrderView>> {
                if states.is_empty() {
                    return Ok(vec![]);
                }
                let query = format!(
                    "select * from parent_order where company_id = $1 and state in ({}) \
                     order by created_at desc, parent_order_id desc limit {MAX_ORDERS_LISTED}",
                    sql::placeholders(2, states.len())
                );
                let mut q = sqlx::query_as::<_, ParentOrderRow>(sqlx::AssertSqlSafe(query)).bind(company.0);
                for s in states {
                    q = q.bind(s.as_str());
                }
                convert(q.fetch_all(&mut *self.tx).await.map_err(map_err)?, ParentOrderRow::into_model)
            }

            async fn hold_block(&mut self, id: InstrumentId) -> StoreResult<i64> {
                if let Some(&block) = self.memo.blocks.get(&id) {
                    return Ok(block);
                }
                let block: i64 = sqlx::query_scalar(HOLD_BLOCK)
                    .bind(id.0)
                    .fetch_optional(&mut *self.tx)
                    .await
                    .map_err(map_err)?
                    .ok_or_else(|| StoreError::Other(format!("instrument {} not found", id.0)))?;
                self.memo.blocks.insert(id, block);
                Ok(block)
            }

            async fn insert_order(&mut self, o: &ChildOrder) -> StoreResult<()> {
                let shown = self.shown(o).await?;
                let sql = format!("insert into child_order ({}) values ({})", sql::ORDER_COLUMNS, sql::placeholders(1, 19));
                bind_order(sqlx::query(sqlx::AssertSqlSafe(sql)), o, shown)
                    .execute(&mut *self.tx)
                    .await
                    .map_err(map_err)?;
                Ok(())
            }

            async fn show_by_block(&mut self, orders: &[ChildOrder]) -> StoreResult<Vec<OrderId>> {
                let mut shown = Vec::with_capacity(orders.len());
                for o in orders {
                    shown.push(self.shown(o).await?);
                }
                let mut written = std::collections::HashSet::with_capacity(orders.len());
                for (chunk, shown) in orders.chunks(1000).zip(shown.chunks(1000)) {
                    let rows: Vec<String> =
                        (0..chunk.len()).map(|r| format!("({})", sql::placeholders(6 * r + 1, 6))).collect();
                    let query = format!("{}{} {}", sql::SHOW_BY_BLOCK[0], rows.join(", "), sql::SHOW_BY_BLOCK[1]);
                    let mut q = sqlx::query_scalar::<_, Uuid>(sqlx::AssertSqlSafe(query));
                    for (o, shown) in chunk.iter().zip(shown) {
                        q = q.bind(o.order_id.0).bind(o.state.as_str()).bind(Dec(o.price)).bind(o.quantity)
                            .bind(o.iceberg).bind(*shown);
                    }
                    written.extend(q.fetch_all(&mut *self.tx).await.map_err(map_err)?);
                }
                Ok(orders.iter().map(|o| o.order_id).filter(|id| !written.contains(&id.0)).collect())
            }

            async fn update_order(&mut self, before: &ChildOrder, after: &ChildOrder) -> StoreResult<()> {
                let shown = self.shown(after).await?;
                let r = sqlx::query(UPDATE_ORDER)
                .bind(after.state.as_str())
                .bind(Dec(after.price))
                .bind(after.quantity)
                .bind(after.iceberg)
                .bind(after.residual)
                .bind(Ts(after.updated_at))
                .bind(before.order_id.0)
                .bind(before.state.as_str())
                .bind(Dec(before.price))
                .bind(before.quantity)
                .bind(before.iceberg)
                .bind(after.parent_counts().0)
                .bind(after.parent_counts().1)
                .bind(after.rests())
                .bind(after.min_execution)
                .bind(shown)
                .execute(&mut *self.tx)
                .await
                .map_err(map_err)?;
                if r.rows_affected() != 1 {
                    return Err(StoreError::Stale(format!("order {}", before.order_id)));
                }
                Ok(())
            }

            async fn order(&mut self, id: OrderId) -> StoreResult<Option<ChildOrder>> {
                sqlx::query_as::<_, ChildOrderRow>("select * from child_order where order_id = $1")
                    .bind(id.0)
                    .fetch_optional(&mut *self.tx)
                    .await
                    .map_err(map_err)?
                    .map(ChildOrderRow::into_model)
                    .transpose()
            }

            async fn orders_by_id(&mut self, ids: &[OrderId]) -> StoreResult<Vec<ChildOrder>> {
                if ids.is_empty() {
                    return Ok(Vec::new());
                }
                let sql = format!("select * from child_order where order_id in ({})", sql::placeholders(1, ids.len()));
                let mut query = sqlx::query_as::<_, ChildOrderRow>(sqlx::AssertSqlSafe(sql));
                for id in ids {
                    query = query.bind(id.0);
                }
                convert(query.fetch_all(&mut *self.tx).await.map_err(map_err)?, ChildOrderRow::into_model)
            }

            async fn orders(&mut self, f: &OrderFilter) -> StoreResult<Vec<ChildOrder>> {
                let states = if f.states.is_empty() {
                    String::new()
                } else {
                    format!(" and state in ({})", sql::placeholders(5, f.states.len()))
                };
                let limit = f.limit.map(|n| format!(" limit {}", n.max(0))).unwrap_or_default();
                let query = format!(
                    "select * from child_order where ($1 is null or company_id = $1) \
                     and ($2 is null or instrument_id = $2) and ($3 is null or created_by = $3) \
                     and ($4 is null or parent_order_id = $4){states} order by created_at desc, order_id desc{limit}"
                );
                let mut q = sqlx::query_as::<_, ChildOrderRow>(sqlx::AssertSqlSafe(query))
                    .bind(f.company_id.map(|c| c.0))
                    .bind(f.instrument_id.map(|c| c.0))
                    .bind(f.created_by.map(|c| c.0))
                    .bind(f.parent_order_id.map(|c| c.0));
                for s in &f.states {
                    q = q.bind(s.as_str());
                }
                convert(q.fetch_all(&mut *self.tx).await.map_err(map_err)?, ChildOrderRow::into_model)
            }

            async fn book_rows(&mut self, instrument: InstrumentId) -> StoreResult<Vec<BookRow>> {
                let levels: Json<Vec<BookLevelJson>> = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
                    "select {BOOK_LEVELS} from book_level where instrument_id = $1 and shown > 0"
                )))
                .bind(instrument.0)
                .fetch_one(&mut *self.tx)
                .await
                .map_err(map_err)?;
                convert(levels.0, BookLevelJson::into_model)
            }

            async fn orders_facing(
                &mut self,
                parent: ParentOrderId,
                company: CompanyId,
                limit: rust_decimal::Decimal,
                most: Option<i64>,
            ) -> StoreResult<Vec<FacingOrder>> {
                let rows = sqlx::query_as::<_, FacingOrderRow>(sqlx::AssertSqlSafe(ORDERS_FACING.as_str()))
                .bind(parent.0)
                .bind(company.0)
                .bind(Dec(limit))
                .bind(most.unwrap_or(i64::MAX))
                .fetch_all(&mut *self.tx)
                .await
                .map_err(map_err)?;
                convert(rows, FacingOrderRow::into_model)
            }

            async fn admin_orders(&mut self, f: &AdminOrderFilter) -> StoreResult<Page<AdminOrder>> {
                let (filter, n) = sql::admin_order_filter(f);
                macro_rules! bind_filter {
                    ($q:expr) => {{
                        let mut q = $q;
                        if let Some(o) = f.order_id {
                            q = q.bind(o.0);
                        }
                        if let Some(c) = f.company_id {
                            q = q.bind(c.0);
                        }
                        if let Some(i) = f.instrument_id {
                            q = q.bind(i.0);
                        }
                        for s in &f.states {
                            q = q.bind(s.as_str());
                        }
                        if let Some(t) = f.from {
                            q = q.bind(Ts(t));
                        }
                        if let Some(t) = f.until {
                            q = q.bind(Ts(t));
                        }
                        q
                    }};
                }
                let total_items: i64 = bind_filter!(sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
                    "select count(*) from child_order c{filter}"
                ))))
                .fetch_one(&mut *self.tx)
                .await
                .map_err(map_err)?;
                let query = format!(
                    "select c.*, u.email as created_by_email, co.name as company_name, i.name as instrument_name, \
                     i.tick_size as instrument_tick_size, \
                     exists (select 1 from rfq r where r.order_id = c.order_id) as from_rfq, \
                     b.name as broker_name from (select c.order_id from child_order c{filter} \
                     order by c.created_at desc, c.order_id desc limit ${} offset ${}) p {} \
                     order by c.created_at desc, c.order_id desc",
                    n + 1,
                    n + 2,
                    sql::ADMIN_ORDER_JOINS
                );
                let rows = bind_filter!(sqlx::query_as::<_, AdminOrderRow>(sqlx::AssertSqlSafe(query)))
                    .bind(f.size)
                    .bind(f.page.saturating_mul(f.size))
                    .fetch_all(&mut *self.tx)
                    .await
                    .map_err(map_err)?;
                Ok(Page { items: convert(rows, AdminOrderRow::into_model)?, total_items })
            }

            async fn orders_in_states(
                &mut self,
                states: &[OrderState],
                created_until: DateTime<Utc>,
            ) -> StoreResult<Vec<ChildOrder>> {
                if states.is_empty() {
                    return Ok(vec![]);
                }
                let query = format!(
                    "select * from child_order where created_at <= $1 and state in ({}) order by created_at, order_id",
                    sql::placeholders(2, states.len())
                );
                let mut q = sqlx::query_as::<_, ChildOrderRow>(sqlx::AssertSqlSafe(query)).bind(Ts(created_until));
                for s in states {
                    q = q.bind(s.as_str());
                }
                convert(q.fetch_all(&mut *self.tx).await.map_err(map_err)?, ChildOrderRow::into_model)
            }
        }

        #[async_trait]
        impl RowsRepo for $tx {
            async fn insert_rows(&mut self, rows: &NewRows) -> StoreResult<()> {
                let timers: Vec<&Timer> = rows.timers.iter().filter(|t| self.remember_timer(t)).collect();
                if !WRITES_IN_ONE_STATEMENT {
                    // One after the other, each row after those its foreign keys name.
                    for m in &rows.match_requests {
                        self.insert_match_request(m).await?;
                    }
                    for n in &rows.notifications {
                        self.insert_notification(n).await?;
                    }
                    for c in &rows.broker_confirmations {
                        self.insert_broker_confirmation(c).await?;
                    }
                    for m in &rows.outbox {
                        self.insert_outbox(m).await?;
                    }
                    for t in timers {
                        bind_timer(sqlx::query(sql::INSERT_TIMER), t).execute(&mut *self.tx).await.map_err(map_err)?;
                    }
                    for a in &rows.action_logs {
                        self.insert_action_log(a).await?;
                    }
                    return Ok(());
                }
                // Data-modifying CTEs: every part sees the same snapshot, and the foreign
                // keys are checked at the statement's end, when all rows are there.
                let mut parts: Vec<String> = Vec::new();
                let mut at = 0;
                let mut part = |insert: &str, columns: usize| {
                    parts.push(sql::shift_placeholders(insert, at));
                    at += columns;
                };
                rows.match_requests.iter().for_each(|_| part(sql::INSERT_MATCH_REQUEST, 24));
                rows.notifications.iter().for_each(|_| part(sql::INSERT_NOTIFICATION, 19));
                rows.broker_confirmations.iter().for_each(|_| part(sql::INSERT_BROKER_CONFIRMATION, 9));
                rows.outbox.iter().for_each(|_| part(sql::INSERT_OUTBOX, 7));
                timers.iter().for_each(|_| part(sql::INSERT_TIMER, 6));
                rows.action_logs.iter().for_each(|_| part(sql::INSERT_ACTION_LOG, 10));
                let Some(last) = parts.pop() else {
                    return Ok(());
                };
                let ctes: Vec<String> = parts.iter().enumerate().map(|(i, p)| format!("w{i} as ({p})")).collect();
                let query = if ctes.is_empty() { last } else { format!("with {} {last}", ctes.join(", ")) };
                let mut q = sqlx::query(sqlx::AssertSqlSafe(query));
                for m in &rows.match_requests {
                    q = bind_match_request(q, m);
                }
                for n in &rows.notifications {
                    q = bind_notification(q, n);
                }
                for c in &rows.broker_confirmations {
                    q = bind_broker_confirmation(q, c);
                }
                for m in &rows.outbox {
                    q = bind_outbox(q, m);
                }
                for t in timers {
                    q = bind_timer(q, t);
                }
                for a in &rows.action_logs {
                    q = bind_action_log(q, a);
                }
                q.execute(&mut *self.tx).await.map_err(map_err)?;
                Ok(())
            }
        }

        #[async_trait]
        impl MatchRequestRepo for $tx {
            async fn insert_match_request(&mut self, m: &MatchRequest) -> StoreResult<()> {
                bind_match_request(sqlx::query(sql::INSERT_MATCH_REQUEST), m)
                    .execute(&mut *self.tx)
                    .await
                    .map_err(map_err)?;
                Ok(())
            }

            async fn update_match_request_state(
                &mut self,
                id: MatchRequestId,
                from: MatchRequestState,
                to: MatchRequestState,
                at: DateTime<Utc>,
            ) -> StoreResult<()> {
                let r = sqlx::query(
                    "update match_request set state = $1, updated_at = $2, \
                     answered_at = case when $4 = 'PENDING' then $2 else answered_at end \
                     where match_request_id = $3 and state = $4",
                )
                .bind(to.as_str())
                .bind(Ts(at))
                .bind(id.0)
                .bind(from.as_str())
                .execute(&mut *self.tx)
                .await
                .map_err(map_err)?;
                if r.rows_affected() != 1 {
                    return Err(StoreError::Stale(format!("match request {id}")));
                }
                Ok(())
            }

            async fn mark_answered_automatically(&mut self, id: MatchRequestId) -> StoreResult<()> {
                sqlx::query("update match_request set answered_automatically = true where match_request_id = $1")
                    .bind(id.0)
                    .execute(&mut *self.tx)
                    .await
                    .map_err(map_err)?;
                Ok(())
            }

            async fn match_request(&mut self, id: MatchRequestId) -> StoreResult<Option<MatchRequest>> {
                sqlx::query_as::<_, MatchRequestRow>("select * from match_request where match_request_id = $1")
                    .bind(id.0)
                    .fetch_optional(&mut *self.tx)
                    .await
                    .map_err(map_err)?
                    .map(MatchRequestRow::into_model)
                    .transpose()
            }

            async fn match_requests_of_order(
                &mut self,
                order: OrderId,
                state: MatchRequestState,
            ) -> StoreResult<Vec<MatchRequest>> {
                let rows = sqlx::query_as::<_, MatchRequestRow>(
                    "select * from match_request where (requesting_order_id = $1 or responding_order_id = $1) \
                     and state = $2 order by created_at, match_request_id",
                )
                .bind(order.0)
                .bind(state.as_str())
                .fetch_all(&mut *self.tx)
                .await
                .map_err(map_err)?;
                convert(rows, MatchRequestRow::into_model)
            }

            async fn match_requests_between(
                &mut self,
                company: Option<CompanyId>,
                from: DateTime<Utc>,
                to: DateTime<Utc>,
            ) -> StoreResult<Vec<MatchRequest>> {
                let rows = sqlx::query_as::<_, MatchRequestRow>(
                    "select * from match_request where created_at >= $2 and created_at <= $3 \
                     and ($1 is null or requesting_company_id = $1 or responding_company_id = $1) \
                     order by created_at, match_request_id",
                )
                .bind(company.map(|c| c.0))
                .bind(Ts(from))
                .bind(Ts(to))
                .fetch_all(&mut *self.tx)
                .await
                .map_err(map_err)?;
                convert(rows, MatchRequestRow::into_model)
            }

            async fn rested_between(
                &mut self,
                company: Option<CompanyId>,
                from: DateTime<Utc>,
                to: DateTime<Utc>,
            ) -> StoreResult<Vec<(OrderState, i64)>> {
                let rows: Vec<(String, i64)> = sqlx::query_as(
                    "select o.state, cast(sum(o.quantity) as bigint) from child_order o \
                     where ($1 is null or o.company_id = $1) and o.created_at >= $2 and o.created_at <= $3 \
                     and not exists (select 1 from match_request m where m.requesting_order_id = o.order_id) \
                     and not exists (select 1 from match_request m where m.responding_order_id = o.order_id \
                                     and m.rfq_id is not null) \
                     group by o.state",
                )
                .bind(company.map(|c| c.0))
                .bind(Ts(from))
                .bind(Ts(to))
                .fetch_all(&mut *self.tx)
                .await
                .map_err(map_err)?;
                rows.into_iter()
                    .map(|(state, n)| Ok((stored("state", &state, OrderState::parse(&state))?, n)))
                    .collect()
            }

            async fn match_requests_in_state(&mut self, state: MatchRequestState) -> StoreResult<Vec<MatchRequest>> {
                let rows = sqlx::query_as::<_, MatchRequestRow>(
                    "select * from match_request where state = $1 order by created_at, match_request_id",
                )
                .bind(state.as_str())
                .fetch_all(&mut *self.tx)
                .await
                .map_err(map_err)?;
                convert(rows, MatchRequestRow::into_model)
            }

            async fn received_by_state(
                &mut self,
                by: Responders<'_>,
                since: DateTime<Utc>,
            ) -> StoreResult<Vec<(Uuid, MatchRequestState, i64)>> {
                let (column, ids): (&str, Vec<Uuid>) = match by {
                    Responders::Users(u) => ("responding_user_id", u.iter().map(|u| u.0).collect()),
                    Responders::Companies(c) => ("responding_company_id", c.iter().map(|c| c.0).collect()),
                };
                if ids.is_empty() {
                    return Ok(vec![]);
                }
                let query = format!(
                    "select {column}, state, count(*) from match_request where created_at >= $1 \
                     and (state <> $2 or updated_at >= expires_at) and rfq_id is null and {column} in ({}) \
                     group by {column}, state",
                    sql::placeholders(3, ids.len())
                );
                let mut q = sqlx::query_as::<_, (Uuid, String, i64)>(sqlx::AssertSqlSafe(query))
                    .bind(Ts(since))
                    .bind(MatchRequestState::TimedOut.as_str());
                for id in ids {
                    q = q.bind(id);
                }
                q.fetch_all(&mut *self.tx)
                    .await
                    .map_err(map_err)?
                    .into_iter()
                    .map(|(id, state, n)| {
                        let parsed = MatchRequestState::parse(&state)
                            .ok_or_else(|| StoreError::Other(format!("unknown match request state {state}")))?;
                        Ok((id, parsed, n))
                    })
                    .collect()
            }

            async fn billing_items(&mut self, states: &[MatchRequestState]) -> StoreResult<Vec<BillingItem>> {
                let [a, b, c, d, e] = states else {
                    return Err(StoreError::Other(format!("billing takes five states, not {}", states.len())));
                };
                let rows = sqlx::query_as::<_, BillingItemRow>(sql::BILLING_ITEMS)
                    .bind(a.as_str())
                    .bind(b.as_str())
                    .bind(c.as_str())
                    .bind(d.as_str())
                    .bind(e.as_str())
                    .fetch_all(&mut *self.tx)
                    .await
                    .map_err(map_err)?;
                convert(rows, BillingItemRow::into_model)
            }

            async fn match_requests_of_user(
                &mut self,
                user: UserId,
                state: MatchRequestState,
            ) -> StoreResult<Vec<MatchRequest>> {
                let rows = sqlx::query_as::<_, MatchRequestRow>(
                    "select * from match_request where (requesting_user_id = $1 or responding_user_id = $1) \
                     and state = $2 order by created_at desc, match_request_id desc",
                )
                .bind(user.0)
                .bind(state.as_str())
                .fetch_all(&mut *self.tx)
                .await
                .map_err(map_err)?;
                convert(rows, MatchRequestRow::into_model)
            }
        }

        #[async_trait]
        impl BrokerConfirmationRepo for $tx {
            async fn insert_broker_confirmation(&mut self, c: &BrokerConfirmation) -> StoreResult<()> {
                bind_broker_confirmation(sqlx::query(sql::INSERT_BROKER_CONFIRMATION), c)
                    .execute(&mut *self.tx)
                    .await
                    .map_err(map_err)?;
                Ok(())
            }

            async fn broker_confirmations_between(
                &mut self,
                company: Option<CompanyId>,
                from: DateTime<Utc>,
                to: DateTime<Utc>,
            ) -> StoreResult<Vec<BrokerConfirmation>> {
                let rows = sqlx::query_as::<_, BrokerConfirmationRow>(
                    "select b.* from broker_confirmation b join child_order o on o.order_id = b.order_id \
                     where b.created_at >= $2 and b.created_at <= $3 and ($1 is null or o.company_id = $1) \
                     order by b.created_at",
                )
                .bind(company.map(|c| c.0))
                .bind(Ts(from))
                .bind(Ts(to))
                .fetch_all(&mut *self.tx)
                .await
                .map_err(map_err)?;
                convert(rows, BrokerConfirmationRow::into_model)
            }

            async fn broker_confirmation(&mut self, token_hash: &str) -> StoreResult<Option<BrokerConfirmation>> {
                sqlx::query_as::<_, BrokerConfirmationRow>("select * from broker_confirmation where token_hash = $1")
                    .bind(token_hash)
                    .fetch_optional(&mut *self.tx)
                    .await
                    .map_err(map_err)?
                    .map(BrokerConfirmationRow::into_model)
                    .transpose()
            }

            async fn broker_confirmation_of_order(
                &mut self,
                order: OrderId,
                step: ConfirmationStep,
            ) -> StoreResult<Option<BrokerConfirmation>> {
                sqlx::query_as::<_, BrokerConfirmationRow>(
                    "select * from broker_confirmation where order_id = $1 and step = $2 \
                     order by created_at desc limit 1",
                )
                .bind(order.0)
                .bind(step.as_str())
                .fetch_optional(&mut *self.tx)
                .await
                .map_err(map_err)?
                .map(BrokerConfirmationRow::into_model)
                .transpose()
            }

            async fn answer_broker_confirmation(
                &mut self,
                token_hash: &str,
                answer: bool,
                at: DateTime<Utc>,
            ) -> StoreResult<()> {
                let r = sqlx::query(
                    "update broker_confirmation set answered_at = $1, answer = $2 \
                     where token_hash = $3 and answered_at is null",
                )
                .bind(Ts(at))
                .bind(answer)
                .bind(token_hash)
                .execute(&mut *self.tx)
                .await
                .map_err(map_err)?;
                if r.rows_affected() != 1 {
                    return Err(StoreError::Stale("broker confirmation".into()));
                }
                Ok(())
            }

            async fn broker_confirmations_of_match(
                &mut self,
                id: MatchRequestId,
                step: ConfirmationStep,
            ) -> StoreResult<Vec<BrokerConfirmation>> {
                let rows = sqlx::query_as::<_, BrokerConfirmationRow>(
                    "select * from broker_confirmation where match_request_id = $1 and step = $2 order by order_id",
                )
                .bind(id.0)
                .bind(step.as_str())
                .fetch_all(&mut *self.tx)
                .await
                .map_err(map_err)?;
                convert(rows, BrokerConfirmationRow::into_model)
            }
        }

        #[async_trait]
        impl NotificationRepo for $tx {
            async fn insert_notification(&mut self, n: &Notification) -> StoreResult<()> {
                bind_notification(sqlx::query(sql::INSERT_NOTIFICATION), n)
                    .execute(&mut *self.tx)
                    .await
                    .map_err(map_err)?;
                Ok(())
            }

            async fn update_notification_flags(&mut self, n: &Notification) -> StoreResult<()> {
                sqlx::query("update notification set read = $1, archived = $2, updated_at = $3 where notification_id = $4")
                    .bind(n.read)
                    .bind(n.archived)
                    .bind(Ts(n.updated_at))
                    .bind(n.notification_id.0)
                    .execute(&mut *self.tx)
                    .await
                    .map_err(map_err)?;
                Ok(())
            }

            async fn set_notification_status(
                &mut self,
                id: NotificationId,
                status: MatchRequestState,
                at: DateTime<Utc>,
            ) -> StoreResult<()> {
                sqlx::query("update notification set status = $1, updated_at = $2 where notification_id = $3")
                    .bind(status.as_str())
                    .bind(Ts(at))
                    .bind(id.0)
                    .execute(&mut *self.tx)
                    .await
                    .map_err(map_err)?;
                Ok(())
            }

            async fn notification(&mut self, id: NotificationId) -> StoreResult<Option<Notification>> {
                sqlx::query_as::<_, NotificationRow>("select * from notification where notification_id = $1")
                    .bind(id.0)
                    .fetch_optional(&mut *self.tx)
                    .await
                    .map_err(map_err)?
                    .map(NotificationRow::into_model)
                    .transpose()
            }

            async fn notifications_of_user(
                &mut self,
                user: UserId,
                archived: Option<bool>,
                newest_first: bool,
                page: i64,
                size: i64,
            ) -> StoreResult<Page<Notification>> {
                let filter = "where user_id = $1 and ($2 is null or archived = $2)";
                let total_items: i64 =
                    sqlx::query_scalar(sqlx::AssertSqlSafe(format!("select count(*) from notification {filter}")))
                        .bind(user.0)
                        .bind(archived)
                        .fetch_one(&mut *self.tx)
                        .await
                        .map_err(map_err)?;
                let order = if newest_first { "desc" } else { "asc" };
                let rows = sqlx::query_as::<_, NotificationRow>(sqlx::AssertSqlSafe(format!(
                    "select * from notification {filter} order by created_at {order}, notification_id {order} \
                     limit $3 offset $4"
                )))
                .bind(user.0)
                .bind(archived)
                .bind(size)
                .bind(page * size)
                .fetch_all(&mut *self.tx)
                .await
                .map_err(map_err)?;
                Ok(Page { items: convert(rows, NotificationRow::into_model)?, total_items })
            }

            async fn set_match_request_notifications_status(
                &mut self,
                id: MatchRequestId,
                of_type: upstairs_domain::notification::NotificationType,
                status: MatchRequestState,
                at: DateTime<Utc>,
            ) -> StoreResult<Vec<Notification>> {
                let rows = sqlx::query_as::<_, NotificationRow>(
                    "update notification set status = $1, updated_at = $2 where match_request_id = $3 and type = $4 \
                     returning *",
                )
                .bind(status.as_str())
                .bind(Ts(at))
                .bind(id.0)
                .bind(of_type.as_str())
                .fetch_all(&mut *self.tx)
                .await
                .map_err(map_err)?;
                let mut changed = convert(rows, NotificationRow::into_model)?;
                changed.sort_by_key(|n| (n.created_at, n.notification_id));
                Ok(changed)
            }

            async fn notifications_of_match_request(&mut self, id: MatchRequestId) -> StoreResult<Vec<Notification>> {
                let rows = sqlx::query_as::<_, NotificationRow>(
                    "select * from notification where match_request_id = $1 order by created_at, notification_id",
                )
                .bind(id.0)
                .fetch_all(&mut *self.tx)
                .await
                .map_err(map_err)?;
                convert(rows, NotificationRow::into_model)
            }

            async fn notifications_of_rfq(&mut self, id: RfqId) -> StoreResult<Vec<Notification>> {
                let rows = sqlx::query_as::<_, NotificationRow>(
                    "select * from notification where rfq_id = $1 order by created_at, notification_id",
                )
                .bind(id.0)
                .fetch_all(&mut *self.tx)
                .await
                .map_err(map_err)?;
                convert(rows, NotificationRow::into_model)
            }
        }

        #[async_trait]
        impl RfqRepo for $tx {
            async fn quotes_between(
                &mut self,
                company: Option<CompanyId>,
                from: DateTime<Utc>,
                to: DateTime<Utc>,
            ) -> StoreResult<Vec<QuoteTimes>> {
                let rows: Vec<(Uuid, Uuid, Uuid, String, Ts, Option<Ts>)> = sqlx::query_as(
                    "select q.rfq_id, q.company_id, s.company_id, s.state, s.created_at, s.quoted_at \
                     from rfq_response s join rfq q on q.rfq_id = s.rfq_id \
                     where q.created_at >= $2 and q.created_at <= $3 \
                     and ($1 is null or q.company_id = $1 or s.company_id = $1) order by s.created_at",
                )
                .bind(company.map(|c| c.0))
                .bind(Ts(from))
                .bind(Ts(to))
                .fetch_all(&mut *self.tx)
                .await
                .map_err(map_err)?;
                rows.into_iter()
                    .map(|(rfq, requester, provider, state, asked_at, quoted_at)| {
                        Ok(QuoteTimes {
                            rfq_id: RfqId(rfq),
                            requester: CompanyId(requester),
                            provider: CompanyId(provider),
                            state: crate::rows::stored("response state", &state, ResponseState::parse(&state))?,
                            asked_at: asked_at.0,
                            quoted_at: quoted_at.map(|t| t.0),
                        })
                    })
                    .collect()
            }

            async fn insert_rfq(&mut self, r: &Rfq) -> StoreResult<()> {
                sqlx::query(
                    "insert into rfq (rfq_id, parent_order_id, order_id, instrument_id, direction, company_id, \
                     user_id, quantity, two_way, anonymous, state, created_at, expires_at, updated_at) \
                     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)",
                )
                .bind(r.rfq_id.0)
                .bind(r.parent_order_id.0)
                .bind(r.order_id.0)
                .bind(r.instrument_id.0)
                .bind(r.direction.as_str())
                .bind(r.company_id.0)
                .bind(r.user_id.0)
                .bind(r.quantity)
                .bind(r.two_way)
                .bind(r.anonymous)
                .bind(r.state.as_str())
                .bind(Ts(r.created_at))
                .bind(Ts(r.expires_at))
                .bind(Ts(r.updated_at))
                .execute(&mut *self.tx)
                .await
                .map_err(map_err)?;
                Ok(())
            }

            async fn update_rfq_state(
                &mut self,
                id: RfqId,
                from: RfqState,
                to: RfqState,
                at: DateTime<Utc>,
            ) -> StoreResult<()> {
                let r = sqlx::query("update rfq set state = $1, updated_at = $2 where rfq_id = $3 and state = $4")
                    .bind(to.as_str())
                    .bind(Ts(at))
                    .bind(id.0)
                    .bind(from.as_str())
                    .execute(&mut *self.tx)
                    .await
                    .map_err(map_err)?;
                if r.rows_affected() != 1 {
                    return Err(StoreError::Stale(format!("RFQ {id}")));
                }
                Ok(())
            }

            async fn rfq(&mut self, id: RfqId) -> StoreResult<Option<Rfq>> {
                sqlx::query_as::<_, RfqRow>("select * from rfq where rfq_id = $1")
                    .bind(id.0)
                    .fetch_optional(&mut *self.tx)
                    .await
                    .map_err(map_err)?
                    .map(RfqRow::into_model)
                    .transpose()
            }

            async fn rfqs_of_company(
                &mut self,
                company: CompanyId,
                state: RfqState,
                parent: Option<ParentOrderId>,
            ) -> StoreResult<Vec<Rfq>> {
                let rows = sqlx::query_as::<_, RfqRow>(
                    "select * from rfq where company_id = $1 and state = $2 \
                     and ($3 is null or parent_order_id = $3) order by created_at desc, rfq_id desc",
                )
                .bind(company.0)
                .bind(state.as_str())
                .bind(parent.map(|p| p.0))
                .fetch_all(&mut *self.tx)
                .await
                .map_err(map_err)?;
                convert(rows, RfqRow::into_model)
            }

            async fn rfqs_in_state(&mut self, state: RfqState) -> StoreResult<Vec<Rfq>> {
                let rows = sqlx::query_as::<_, RfqRow>(
                    "select * from rfq where state = $1 order by created_at, rfq_id",
                )
                .bind(state.as_str())
                .fetch_all(&mut *self.tx)
                .await
                .map_err(map_err)?;
                convert(rows, RfqRow::into_model)
            }

            async fn rfqs(&mut self, ids: &[RfqId]) -> StoreResult<Vec<Rfq>> {
                if ids.is_empty() {
                    return Ok(vec![]);
                }
                let query = format!("select * from rfq where rfq_id in ({})", sql::placeholders(1, ids.len()));
                let mut q = sqlx::query_as::<_, RfqRow>(sqlx::AssertSqlSafe(query));
                for id in ids {
                    q = q.bind(id.0);
                }
                convert(q.fetch_all(&mut *self.tx).await.map_err(map_err)?, RfqRow::into_model)
            }

            async fn insert_rfq_response(&mut self, r: &RfqResponse) -> StoreResult<()> {
                sqlx::query(
                    "insert into rfq_response (rfq_response_id, rfq_id, company_id, state, user_id, broker_id, \
                     buy_price, buy_quantity, sell_price, sell_quantity, match_request_id, created_at, updated_at) \
                     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)",
                )
                .bind(r.rfq_response_id.0)
                .bind(r.rfq_id.0)
                .bind(r.company_id.0)
                .bind(r.state.as_str())
                .bind(r.user_id.map(|u| u.0))
                .bind(r.broker_id.map(|b| b.0))
                .bind(r.buy.map(|s| Dec(s.price)))
                .bind(r.buy.map(|s| s.quantity))
                .bind(r.sell.map(|s| Dec(s.price)))
                .bind(r.sell.map(|s| s.quantity))
                .bind(r.match_request_id.map(|m| m.0))
                .bind(Ts(r.created_at))
                .bind(Ts(r.updated_at))
                .execute(&mut *self.tx)
                .await
                .map_err(map_err)?;
                Ok(())
            }

            async fn update_rfq_response(&mut self, before: &RfqResponse, r: &RfqResponse) -> StoreResult<()> {
                let done = sqlx::query(
                    "update rfq_response set state = $1, user_id = $2, broker_id = $3, buy_price = $4, \
                     buy_quantity = $5, sell_price = $6, sell_quantity = $7, match_request_id = $8, updated_at = $9, \
                     quoted_at = coalesce(quoted_at, case when $1 = 'RESPONDED' then $9 end) \
                     where rfq_response_id = $10 and state = $11 and updated_at = $12",
                )
                .bind(r.state.as_str())
                .bind(r.user_id.map(|u| u.0))
                .bind(r.broker_id.map(|b| b.0))
                .bind(r.buy.map(|s| Dec(s.price)))
                .bind(r.buy.map(|s| s.quantity))
                .bind(r.sell.map(|s| Dec(s.price)))
                .bind(r.sell.map(|s| s.quantity))
                .bind(r.match_request_id.map(|m| m.0))
                .bind(Ts(r.updated_at))
                .bind(r.rfq_response_id.0)
                .bind(before.state.as_str())
                .bind(Ts(before.updated_at))
                .execute(&mut *self.tx)
                .await
                .map_err(map_err)?;
                if done.rows_affected() != 1 {
                    return Err(StoreError::Stale(format!("RFQ response {}", r.rfq_response_id)));
                }
                Ok(())
            }

            async fn rfq_responses(&mut self, rfqs: &[RfqId]) -> StoreResult<Vec<RfqResponse>> {
                if rfqs.is_empty() {
                    return Ok(vec![]);
                }
                let query = format!(
                    "select * from rfq_response where rfq_id in ({}) order by created_at, rfq_response_id",
                    sql::placeholders(1, rfqs.len())
                );
                let mut q = sqlx::query_as::<_, RfqResponseRow>(sqlx::AssertSqlSafe(query));
                for id in rfqs {
                    q = q.bind(id.0);
                }
                convert(q.fetch_all(&mut *self.tx).await.map_err(map_err)?, RfqResponseRow::into_model)
            }

            async fn rfq_responses_of_company(
                &mut self,
                company: CompanyId,
                states: &[ResponseState],
                instrument: Option<InstrumentId>,
                since: Option<DateTime<Utc>>,
                limit: i64,
            ) -> StoreResult<Vec<RfqResponse>> {
                if states.is_empty() {
                    return Ok(vec![]);
                }
                let query = format!(
                    "select r.* from rfq_response r join rfq q on q.rfq_id = r.rfq_id \
                     where r.company_id = $1 and ($2 is null or q.instrument_id = $2) \
                     and ($4 is null or q.created_at >= $4) and r.state in ({}) \
                     order by q.created_at desc, r.rfq_response_id desc limit $3",
                    sql::placeholders(5, states.len())
                );
                let mut q = sqlx::query_as::<_, RfqResponseRow>(sqlx::AssertSqlSafe(query))
                    .bind(company.0)
                    .bind(instrument.map(|i| i.0))
                    .bind(limit)
                    .bind(since.map(Ts));
                for s in states {
                    q = q.bind(s.as_str());
                }
                convert(q.fetch_all(&mut *self.tx).await.map_err(map_err)?, RfqResponseRow::into_model)
            }
        }

        #[async_trait]
        impl AllocationRepo for $tx {
            async fn insert_account(&mut self, a: &CompanyAccount) -> StoreResult<()> {
                sqlx::query(
                    "insert into company_account (account_id, company_id, code, name, active, created_at, updated_at) \
                     values ($1, $2, $3, $4, $5, $6, $7)",
                )
                .bind(a.account_id)
                .bind(a.company_id.0)
                .bind(&a.code)
                .bind(&a.name)
                .bind(a.active)
                .bind(Ts(a.created_at))
                .bind(Ts(a.updated_at))
                .execute(&mut *self.tx)
                .await
                .map_err(map_err)?;
                Ok(())
            }

            async fn update_account(&mut self, a: &CompanyAccount) -> StoreResult<()> {
                sqlx::query("update company_account set name = $2, active = $3, updated_at = $4 where account_id = $1")
                    .bind(a.account_id)
                    .bind(&a.name)
                    .bind(a.active)
                    .bind(Ts(a.updated_at))
                    .execute(&mut *self.tx)
                    .await
                    .map_err(map_err)?;
                Ok(())
            }

            async fn account(&mut self, id: Uuid) -> StoreResult<Option<CompanyAccount>> {
                Ok(sqlx::query_as::<_, AccountRow>("select * from company_account where account_id = $1")
                    .bind(id)
                    .fetch_optional(&mut *self.tx)
                    .await
                    .map_err(map_err)?
                    .map(AccountRow::into_model))
            }

            async fn accounts(&mut self, company: CompanyId) -> StoreResult<Vec<CompanyAccount>> {
                Ok(sqlx::query_as::<_, AccountRow>("select * from company_account where company_id = $1 order by code")
                    .bind(company.0)
                    .fetch_all(&mut *self.tx)
                    .await
                    .map_err(map_err)?
                    .into_iter()
                    .map(AccountRow::into_model)
                    .collect())
            }

            async fn allocation(&mut self, order: OrderId) -> StoreResult<Option<Allocation>> {
                sqlx::query_as::<_, AllocationRow>("select * from allocation where order_id = $1")
                    .bind(order.0)
                    .fetch_optional(&mut *self.tx)
                    .await
                    .map_err(map_err)?
                    .map(AllocationRow::into_model)
                    .transpose()
            }

            async fn allocations_by(&mut self, trader: UserId) -> StoreResult<Vec<Allocation>> {
                sqlx::query_as::<_, AllocationRow>(
                    "select * from allocation where updated_by = $1 order by updated_at desc, order_id",
                )
                .bind(trader.0)
                .fetch_all(&mut *self.tx)
                .await
                .map_err(map_err)?
                .into_iter()
                .map(AllocationRow::into_model)
                .collect()
            }

            async fn put_allocation(&mut self, a: &Allocation) -> StoreResult<()> {
                let lines = serde_json::to_string(&a.lines).map_err(|e| StoreError::Other(e.to_string()))?;
                sqlx::query(
                    "insert into allocation (order_id, version, give_up_broker_id, lines, ack, ack_text, updated_by, \
                     updated_at) values ($1, $2, $3, $4, $5, $6, $7, $8) on conflict (order_id) do update set \
                     version = excluded.version, give_up_broker_id = excluded.give_up_broker_id, \
                     lines = excluded.lines, ack = excluded.ack, ack_text = excluded.ack_text, \
                     updated_by = excluded.updated_by, updated_at = excluded.updated_at",
                )
                .bind(a.order_id.0)
                .bind(a.version)
                .bind(a.give_up_broker_id.map(|c| c.0))
                .bind(lines)
                .bind(a.ack.as_str())
                .bind(&a.ack_text)
                .bind(a.updated_by.0)
                .bind(Ts(a.updated_at))
                .execute(&mut *self.tx)
                .await
                .map_err(map_err)?;
                Ok(())
            }
        }

        #[async_trait]
        impl FixRepo for $tx {
            async fn fix_session(&mut self, company: CompanyId, now: DateTime<Utc>) -> StoreResult<FixSession> {
                sqlx::query(
                    "insert into fix_session (company_id, created_at) values ($1, $2) \
                     on conflict (company_id) do nothing",
                )
                .bind(company.0)
                .bind(Ts(now))
                .execute(&mut *self.tx)
                .await
                .map_err(map_err)?;
                // Locked to the end of the transaction: its caller writes it back.
                Ok(sqlx::query_as::<_, FixSessionRow>(sqlx::AssertSqlSafe(format!(
                    "select * from fix_session where company_id = $1{FOR_UPDATE}"
                )))
                .bind(company.0)
                .fetch_one(&mut *self.tx)
                .await
                .map_err(map_err)?
                .into_model())
            }

            async fn read_fix_session(&mut self, company: CompanyId) -> StoreResult<Option<FixSession>> {
                Ok(sqlx::query_as::<_, FixSessionRow>("select * from fix_session where company_id = $1")
                    .bind(company.0)
                    .fetch_optional(&mut *self.tx)
                    .await
                    .map_err(map_err)?
                    .map(FixSessionRow::into_model))
            }

            async fn refuse_fix_order(
                &mut self,
                company: CompanyId,
                cl_ord_id: &str,
                reason: &str,
                at: DateTime<Utc>,
            ) -> StoreResult<()> {
                sqlx::query(
                    "insert into fix_refused_order (company_id, cl_ord_id, reason, created_at) \
                     values ($1, $2, $3, $4) on conflict (company_id, cl_ord_id) do nothing",
                )
                .bind(company.0)
                .bind(cl_ord_id)
                .bind(reason)
                .bind(Ts(at))
                .execute(&mut *self.tx)
                .await
                .map_err(map_err)?;
                Ok(())
            }

            async fn fix_refusal(&mut self, company: CompanyId, cl_ord_id: &str) -> StoreResult<Option<String>> {
                sqlx::query_scalar("select reason from fix_refused_order where company_id = $1 and cl_ord_id = $2")
                    .bind(company.0)
                    .bind(cl_ord_id)
                    .fetch_optional(&mut *self.tx)
                    .await
                    .map_err(map_err)
            }

            async fn update_fix_session(&mut self, s: &FixSession) -> StoreResult<()> {
                sqlx::query(
                    "update fix_session set next_sender_seq = $1, next_target_seq = $2, app_watermark = $3, \
                     reset_owed = $4, logged_on = $5, last_message_at = $6, owner_node = $7, owner_until = $8 \
                     where company_id = $9",
                )
                .bind(s.next_sender_seq)
                .bind(s.next_target_seq)
                .bind(s.app_watermark)
                .bind(s.reset_owed)
                .bind(s.logged_on)
                .bind(s.last_message_at.map(Ts))
                .bind(s.owner_node.as_deref())
                .bind(s.owner_until.map(Ts))
                .bind(s.company_id.0)
                .execute(&mut *self.tx)
                .await
                .map_err(map_err)?;
                Ok(())
            }

            async fn delete_fix_messages(&mut self, company: CompanyId) -> StoreResult<()> {
                sqlx::query("delete from fix_message where company_id = $1")
                    .bind(company.0)
                    .execute(&mut *self.tx)
                    .await
                    .map_err(map_err)?;
                Ok(())
            }

            async fn fix_messages(
                &mut self,
                company: CompanyId,
                begin: i64,
                end: i64,
                limit: i64,
            ) -> StoreResult<Vec<StoredFixMessage>> {
                let rows = sqlx::query_as::<_, StoredFixRow>(
                    "select seq, msg_type, frame from fix_message where company_id = $1 and seq >= $2 and seq <= $3 \
                     order by seq limit $4",
                )
                .bind(company.0)
                .bind(begin)
                .bind(end)
                .bind(limit)
                .fetch_all(&mut *self.tx)
                .await
                .map_err(map_err)?;
                Ok(rows.into_iter().map(StoredFixRow::into_model).collect())
            }

            async fn insert_fix_outbox(&mut self, m: &FixOutboxMessage) -> StoreResult<()> {
                sqlx::query(
                    "insert into fix_outbox (fix_outbox_id, company_id, kind, report, created_at) \
                     values ($1, $2, $3, $4, $5)",
                )
                .bind(&m.fix_outbox_id)
                .bind(m.company_id.0)
                .bind(m.report.kind())
                .bind(Json(&m.report))
                .bind(Ts(m.created_at))
                .execute(&mut *self.tx)
                .await
                .map_err(map_err)?;
                self.memo.fix_queued.push(m.company_id);
                Ok(())
            }

            async fn pending_fix_outbox(&mut self, company: CompanyId, limit: i64) -> StoreResult<Vec<FixOutboxMessage>> {
                let rows = sqlx::query_as::<_, FixOutboxRow>(
                    "select fix_outbox_id, company_id, report, created_at, sent_seq from fix_outbox \
                     where company_id = $1 and sent_seq is null order by created_at, fix_outbox_id limit $2",
                )
                .bind(company.0)
                .bind(limit)
                .fetch_all(&mut *self.tx)
                .await
                .map_err(map_err)?;
                Ok(rows.into_iter().map(FixOutboxRow::into_model).collect())
            }

            async fn mark_fix_outbox_sent(
                &mut self,
                company: CompanyId,
                id: &str,
                seq: i64,
                at: DateTime<Utc>,
            ) -> StoreResult<bool> {
                let done = sqlx::query(MARK_FIX_OUTBOX_SENT)
                .bind(seq)
                .bind(Ts(at))
                .bind(company.0)
                .bind(id)
                .execute(&mut *self.tx)
                .await
                .map_err(map_err)?;
                Ok(done.rows_affected() == 1)
            }

            async fn fix_sessions(&mut self) -> StoreResult<Vec<FixSessionListed>> {
                let rows = sqlx::query_as::<_, FixSessionListedRow>(
                    "select c.company_id, c.name as company_name, c.fix_comp_id, s.next_sender_seq, \
                     s.next_target_seq, s.app_watermark, s.reset_owed, s.logged_on, s.last_message_at, s.created_at, \
                     s.owner_node, s.owner_until \
                     from company c left join fix_session s on s.company_id = c.company_id \
                     where c.fix_comp_id is not null order by c.name",
                )
                .fetch_all(&mut *self.tx)
                .await
                .map_err(map_err)?;
                Ok(rows.into_iter().map(FixSessionListedRow::into_model).collect())
            }

            async fn company_by_fix_comp_id(&mut self, comp_id: &str) -> StoreResult<Option<CompanyId>> {
                let id: Option<Uuid> = sqlx::query_scalar("select company_id from company where fix_comp_id = $1")
                    .bind(comp_id)
                    .fetch_optional(&mut *self.tx)
                    .await
                    .map_err(map_err)?;
                Ok(id.map(CompanyId))
            }

            async fn log_off_fix_sessions(&mut self, lapsed_before: Option<DateTime<Utc>>) -> StoreResult<()> {
                sqlx::query(
                    "update fix_session set logged_on = false, owner_node = null, owner_until = null \
                     where logged_on and ($1 is null or owner_until is null or owner_until < $1)",
                )
                .bind(lapsed_before.map(Ts))
                .execute(&mut *self.tx)
                .await
                .map_err(map_err)?;
                Ok(())
            }

            async fn insert_fix_parent_order(
                &mut self,
                parent: ParentOrderId,
                company: CompanyId,
                cl_ord_id: &str,
            ) -> StoreResult<()> {
                sqlx::query("insert into fix_parent_order (parent_order_id, company_id, cl_ord_id) values ($1, $2, $3)")
                    .bind(parent.0)
                    .bind(company.0)
                    .bind(cl_ord_id)
                    .execute(&mut *self.tx)
                    .await
                    .map_err(map_err)?;
                Ok(())
            }

            async fn fix_parent_order(&mut self, parent: ParentOrderId) -> StoreResult<Option<(CompanyId, String)>> {
                let row: Option<(Uuid, String)> =
                    sqlx::query_as("select company_id, cl_ord_id from fix_parent_order where parent_order_id = $1")
                        .bind(parent.0)
                        .fetch_optional(&mut *self.tx)
                        .await
                        .map_err(map_err)?;
                Ok(row.map(|(c, id)| (CompanyId(c), id)))
            }

            async fn fix_parent_orders(
                &mut self,
                parents: &[ParentOrderId],
            ) -> StoreResult<Vec<(ParentOrderId, CompanyId, String)>> {
                if parents.is_empty() {
                    return Ok(Vec::new());
                }
                let sql = format!(
                    "select parent_order_id, company_id, cl_ord_id from fix_parent_order where parent_order_id in ({})",
                    sql::placeholders(1, parents.len())
                );
                let mut query = sqlx::query_as::<_, (Uuid, Uuid, String)>(sqlx::AssertSqlSafe(sql));
                for id in parents {
                    query = query.bind(id.0);
                }
                let rows = query.fetch_all(&mut *self.tx).await.map_err(map_err)?;
                Ok(rows.into_iter().map(|(p, c, id)| (ParentOrderId(p), CompanyId(c), id)).collect())
            }

            async fn fix_parent_by_cl_ord_id(
                &mut self,
                company: CompanyId,
                cl_ord_id: &str,
            ) -> StoreResult<Option<ParentOrderId>> {
                let id: Option<Uuid> = sqlx::query_scalar(
                    "select parent_order_id from fix_parent_order where company_id = $1 and cl_ord_id = $2",
                )
                .bind(company.0)
                .bind(cl_ord_id)
                .fetch_optional(&mut *self.tx)
                .await
                .map_err(map_err)?;
                Ok(id.map(ParentOrderId))
            }
        }
    };
}

pub(crate) use shared_repos;

#[cfg(test)]
mod tests {
    #[test]
    fn placeholders_shift_by_number() {
        assert_eq!(
            super::shift_placeholders("select $1, $19 || $2 where a = $25", 25),
            "select $26, $44 || $27 where a = $50"
        );
        assert_eq!(super::shift_placeholders("no $ here, $x", 3), "no $ here, $x");
    }
}
