import { BlockCalculator } from '@/features/admin/components/block-calculator';
import { hasAdminDrawer } from '@/lib/permissions';
import { Guard } from '../admin-guard';

export default function AdminBlockCalculatorRoute() {
  return (
    <Guard allow={hasAdminDrawer}>
      <BlockCalculator />
    </Guard>
  );
}
