import { useState } from 'react';
import Button from '@mui/material/Button';
import Paper from '@mui/material/Paper';
import Stack from '@mui/material/Stack';
import Table from '@mui/material/Table';
import TableBody from '@mui/material/TableBody';
import TableCell from '@mui/material/TableCell';
import TableContainer from '@mui/material/TableContainer';
import TableHead from '@mui/material/TableHead';
import TableRow from '@mui/material/TableRow';
import Typography from '@mui/material/Typography';
import GroupOutlined from '@mui/icons-material/GroupOutlined';
import SendOutlined from '@mui/icons-material/SendOutlined';
import VisibilityOutlined from '@mui/icons-material/VisibilityOutlined';
import { AdminPage } from '@/components/layout/admin-page';
import { formatDateTime } from '@/lib/format-date';
import { useNewsletters, type Newsletter } from '../api/get-newsletters';
import { CreateNewsletterDrawer } from './create-newsletter-drawer';
import { PreviewDialog } from './preview-dialog';
import { RecipientsDrawer } from './recipients-drawer';
import { SendDialog } from './send-dialog';
import { visuallyHidden } from '@/components/ui/visually-hidden';

type Open = { kind: 'create' } | { kind: 'recipients' | 'preview' | 'send'; id: string } | null;

/**
 * Admin spec section 2: the Orders newsletter. Named recipient lists built from users,
 * each with the digest of resting interest it sends (preview, then send).
 */
export function NewslettersPanel() {
  const newsletters = useNewsletters();
  const [open, setOpen] = useState<Open>(null);
  const items = newsletters.data ?? [];
  // The dialogs read the newsletter from the list, so they follow its changes.
  const current = open && open.kind !== 'create' ? (items.find((n) => n.newsletter_id === open.id) ?? null) : null;
  const close = () => setOpen(null);
  const show = (kind: 'recipients' | 'preview' | 'send', n: Newsletter) => setOpen({ kind, id: n.newsletter_id });

  const drawer = (
    <>
      {open?.kind === 'create' && <CreateNewsletterDrawer onClose={close} onRecipients={(n) => show('recipients', n)} />}
      {current && open?.kind === 'recipients' && <RecipientsDrawer newsletter={current} onClose={close} />}
      {current && open?.kind === 'preview' && <PreviewDialog newsletter={current} onClose={close} onSend={() => show('send', current)} />}
      {current && open?.kind === 'send' && <SendDialog newsletter={current} onClose={close} />}
    </>
  );

  return (
    <AdminPage
      title="Orders newsletter"
      createLabel="Create newsletter"
      onCreate={() => setOpen({ kind: 'create' })}
      query={newsletters}
      empty={items.length === 0}
      emptyText="No newsletters yet. Create one, then choose its recipients."
      drawer={drawer}
    >
      <TableContainer component={Paper} variant="outlined">
        <Table size="small" aria-label="Newsletters">
          <TableHead>
            <TableRow>
              <TableCell>Name</TableCell>
              <TableCell>Description</TableCell>
              <TableCell align="right">Recipients</TableCell>
              <TableCell>Last sent</TableCell>
              <TableCell>
                <Typography component="span" sx={visuallyHidden}>
                  Actions
                </Typography>
              </TableCell>
            </TableRow>
          </TableHead>
          <TableBody>
            {items.map((n) => (
              <TableRow key={n.newsletter_id} hover>
                <TableCell sx={{ fontWeight: 600 }}>{n.name}</TableCell>
                <TableCell sx={{ maxWidth: 420, overflowWrap: 'anywhere' }}>{n.description}</TableCell>
                <TableCell align="right" sx={{ fontVariantNumeric: 'tabular-nums' }}>
                  {n.recipients.length}
                </TableCell>
                <TableCell sx={{ whiteSpace: 'nowrap', fontVariantNumeric: 'tabular-nums' }}>
                  {n.last_sent_at ? formatDateTime(n.last_sent_at) : <Typography variant="body2" color="text.secondary">Never</Typography>}
                </TableCell>
                <TableCell align="right">
                  <Stack direction="row" spacing={1} sx={{ justifyContent: 'flex-end' }}>
                    <Button size="small" startIcon={<GroupOutlined />} aria-label={`Recipients of ${n.name}`} onClick={() => show('recipients', n)}>
                      Recipients
                    </Button>
                    <Button size="small" startIcon={<VisibilityOutlined />} aria-label={`Preview ${n.name}`} onClick={() => show('preview', n)}>
                      Preview
                    </Button>
                    <Button
                      size="small"
                      variant="outlined"
                      startIcon={<SendOutlined />}
                      aria-label={`Send ${n.name}`}
                      onClick={() => show('send', n)}
                    >
                      Send
                    </Button>
                  </Stack>
                </TableCell>
              </TableRow>
            ))}
          </TableBody>
        </Table>
      </TableContainer>
    </AdminPage>
  );
}
