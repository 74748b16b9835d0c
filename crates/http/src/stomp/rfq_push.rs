//! RFQ pushes (ADR 0029): a change of an RFQ reaches its requester's and each addressed
//! provider's traders' `/user/topic/rfqs` as the row their panel lists: the requester's
//! with every response, a provider's with their company's own response. The rows are
//! read back, for all of one user's changed RFQs at once, by the
//! [`UserPusher`](super::user_push::UserPusher).

use std::collections::BTreeSet;
use upstairs_domain::notification::Party;
use upstairs_domain::{RfqId, UserId};
use upstairs_engine::{Engine, Store};

use super::messages::{IncomingRfqUpdated, RFQS, RfqMessage, RfqUpdated};
use super::user_push::UserFeed;
use crate::routes::rfqs::{IncomingRfqDto, RfqDto};

/// One user's RFQ changes not pushed yet, by the user's side of each.
#[derive(Default)]
pub struct RfqQueue {
    requested: BTreeSet<RfqId>,
    addressed: BTreeSet<RfqId>,
}

/// The feed of `/user/topic/rfqs`.
pub struct RfqFeed<S: Store>(pub Engine<S>);

impl<S: Store> UserFeed for RfqFeed<S> {
    type Change = (RfqId, Party);
    type Queue = RfqQueue;
    type Message = RfqMessage;
    const DESTINATION: &'static str = RFQS;

    fn add(queue: &mut RfqQueue, (rfq, side): (RfqId, Party)) {
        match side {
            Party::Requester => queue.requested.insert(rfq),
            Party::Responder => queue.addressed.insert(rfq),
        };
    }

    fn is_empty(queue: &RfqQueue) -> bool {
        queue.requested.is_empty() && queue.addressed.is_empty()
    }

    async fn read(&self, user: UserId, queue: RfqQueue) -> Result<Vec<RfqMessage>, String> {
        let requested: Vec<RfqId> = queue.requested.into_iter().collect();
        let addressed: Vec<RfqId> = queue.addressed.into_iter().collect();
        let (sent, asked, company) =
            self.0.rfqs.pushed(user, &requested, &addressed).await.map_err(|e| e.to_string())?;
        let now = self.0.clock().now();
        let sent = sent.into_iter().map(|v| RfqMessage::RfqUpdated(RfqUpdated { seq: 0, rfq: RfqDto::new(v, now) }));
        let asked = asked.into_iter().map(|i| {
            RfqMessage::IncomingRfqUpdated(IncomingRfqUpdated {
                seq: 0,
                rfq: IncomingRfqDto::new(i, company.clone(), now),
            })
        });
        Ok(sent.chain(asked).collect())
    }

    fn number(message: &mut RfqMessage, seq: u64) {
        match message {
            RfqMessage::RfqUpdated(m) => m.seq = seq,
            RfqMessage::IncomingRfqUpdated(m) => m.seq = seq,
        }
    }
}
