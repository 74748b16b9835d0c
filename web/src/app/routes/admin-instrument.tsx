import { InstrumentsPanel } from '@/features/admin-instruments/components/instruments-panel';
import { isAdmin } from '@/lib/permissions';
import { Guard } from '../admin-guard';

export default function AdminInstrumentsPanelRoute() {
  return (
    <Guard allow={isAdmin}>
      <InstrumentsPanel />
    </Guard>
  );
}
