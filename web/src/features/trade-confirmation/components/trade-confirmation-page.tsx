import type { ReactNode } from 'react';
import Button from '@mui/material/Button';
import Stack from '@mui/material/Stack';
import Table from '@mui/material/Table';
import TableBody from '@mui/material/TableBody';
import TableCell from '@mui/material/TableCell';
import TableRow from '@mui/material/TableRow';
import Typography from '@mui/material/Typography';
import CheckCircle from '@mui/icons-material/CheckCircleOutlineOutlined';
import LinkOff from '@mui/icons-material/LinkOff';
import { useSearchParams } from 'react-router';
import { SupportContact } from '@/components/errors/support-contact';
import { SomethingWentWrongPage } from '@/components/errors/something-went-wrong-page';
import { AuthLayout } from '@/components/layout/auth-layout';
import { PageLoader } from '@/components/ui/page-loader';
import { ApiError } from '@/lib/api-errors';
import { useAppConfig } from '@/lib/api/get-config';
import { formatDateTime } from '@/lib/format-date';
import { stateLabel } from '@/lib/trading-format';
import { type Link, type Step, type TradeConfirmation, useConfirmTrade, useTradeConfirmation } from '../api/trade-confirmation';

const TEXT = {
  ACCEPT: {
    flag: 'accepted',
    done: 'Thank you!',
    already: 'Already accepted',
    alreadyDetail: 'Order already accepted',
    title: { yes: 'Accept this trade?', no: 'Decline this trade?' },
    button: { yes: 'Accept trade', no: 'Decline trade' },
    after: {
      yes: 'The trade is accepted. Once the other broker has accepted it too, we will e-mail you the link to confirm the fill.',
      no: 'You declined the trade. Both sides have been told.',
    },
  },
  FILL: {
    flag: 'filled',
    done: 'All done!',
    already: 'Trade already confirmed',
    alreadyDetail: 'Order already filled',
    title: { yes: 'Confirm the fill of this trade?', no: 'Report this trade as not filled?' },
    button: { yes: 'Confirm fill', no: 'Report not filled' },
    after: {
      yes: 'The fill is confirmed. Thank you for reporting the trade.',
      no: 'The trade is reported as not filled. Both sides have been told.',
    },
  },
} as const;

/**
 * A missing parameter or a server error: the server-error page. A link the server refuses
 * (400: a wrong or replaced token, an unknown trade) says so and whom to call; a broker
 * reads 'Page Not Found' as a broken site (issue 28).
 */
function failurePage(error: unknown) {
  return error instanceof ApiError && (error.status === 400 || error.status === 404) ? <InvalidLinkPage /> : <SomethingWentWrongPage />;
}

function InvalidLinkPage() {
  const { product_name } = useAppConfig();
  return (
    <AuthLayout width={560}>
      <Stack spacing={2.5} sx={{ alignItems: 'center', textAlign: 'center' }}>
        <LinkOff color="warning" sx={{ fontSize: 48 }} />
        <Typography variant="h1">This link is not valid</Typography>
        <Typography color="text.secondary">
          It may be incomplete, or a newer e-mail about this trade replaced it. Open the latest e-mail from {product_name} about the trade, or call
          the {product_name} desk to confirm it by phone.
        </Typography>
        <SupportContact prefix={`${product_name} desk`} />
      </Stack>
    </AuthLayout>
  );
}

/**
 * The page a broker's e-mail link opens (`/accept-order`, `/fill-order`): the trade and
 * one button. Opening it changes nothing; only the click answers.
 */
export function TradeConfirmationPage({ step }: { step: Step }) {
  const [params] = useSearchParams();
  const text = TEXT[step];
  const orderId = params.get('order_id');
  const token = params.get('token');
  const flag = params.get(text.flag);
  if (!orderId || !token || (flag !== 'true' && flag !== 'false')) return <SomethingWentWrongPage />;
  return <Confirmation link={{ orderId, token, step }} yes={flag === 'true'} />;
}

function Confirmation({ link, yes }: { link: Link; yes: boolean }) {
  const text = TEXT[link.step];
  const trade = useTradeConfirmation(link);
  const confirm = useConfirmTrade(link);
  if (trade.isPending) return <PageLoader />;
  if (trade.isError) return failurePage(trade.error);

  const already = confirm.error instanceof ApiError && confirm.error.detail === text.alreadyDetail;
  if (confirm.isError && !already && !(confirm.error instanceof ApiError && confirm.error.status === 409)) {
    return failurePage(confirm.error);
  }
  const answered = confirm.data?.answer ?? null;
  if (confirm.isSuccess && answered !== null) {
    return (
      <Outcome heading={text.done} trade={confirm.data}>
        {text.after[answered ? 'yes' : 'no']}
      </Outcome>
    );
  }
  if (already || trade.data.answer !== null) {
    return (
      <Outcome heading={text.already} trade={trade.data}>
        This trade was answered before: nothing more to do.
      </Outcome>
    );
  }
  const conflict = confirm.error instanceof ApiError ? confirm.error.detail : undefined;
  const broken = trade.data.state === 'BROKER_REJECTED';
  return (
    <AuthLayout width={560}>
      <Stack spacing={3}>
        <Typography variant="h1">{text.title[yes ? 'yes' : 'no']}</Typography>
        <Typography color="text.secondary">
          {trade.data.broker_name}: your client {trade.data.client_name} matched this block trade.
        </Typography>
        <TradeTable trade={trade.data} />
        {broken || conflict ? (
          <Typography role="alert" color="error">
            {conflict ?? 'This trade was declined by a broker.'}
          </Typography>
        ) : (
          <Button
            variant="contained"
            color={yes ? 'primary' : 'error'}
            size="large"
            loading={confirm.isPending}
            onClick={() => confirm.mutate(yes)}
          >
            {text.button[yes ? 'yes' : 'no']}
          </Button>
        )}
      </Stack>
    </AuthLayout>
  );
}

function Outcome({ heading, trade, children }: { heading: string; trade: TradeConfirmation; children: ReactNode }) {
  return (
    <AuthLayout width={560}>
      <Stack spacing={3} sx={{ alignItems: 'center', textAlign: 'center' }}>
        <CheckCircle color="success" sx={{ fontSize: 48 }} />
        <Typography variant="h1">{heading}</Typography>
        <Typography color="text.secondary">{children}</Typography>
        <TradeTable trade={trade} />
      </Stack>
    </AuthLayout>
  );
}

function TradeTable({ trade }: { trade: TradeConfirmation }) {
  const rows: [string, string][] = [
    ['Client', trade.client_name],
    ['Trader', trade.trader_name],
    ['Instrument', trade.instrument_name],
    ['Side', trade.direction === 'BUY' ? 'Buy' : 'Sell'],
    ['Quantity', trade.quantity.toLocaleString('en-GB')],
    ['Price', String(trade.price)],
    ['Counterparty broker', trade.counterparty_broker_name],
    ['Matched at', formatDateTime(trade.matched_at)],
    ['State', stateLabel(trade.state)],
  ];
  return (
    <Table size="small" aria-label="Trade">
      <TableBody>
        {rows.map(([k, v]) => (
          <TableRow key={k}>
            <TableCell component="th" scope="row" sx={{ color: 'text.secondary', width: '45%' }}>
              {k}
            </TableCell>
            <TableCell sx={{ fontWeight: 600 }}>{v}</TableCell>
          </TableRow>
        ))}
      </TableBody>
    </Table>
  );
}
