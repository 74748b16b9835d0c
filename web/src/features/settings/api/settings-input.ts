import { z } from 'zod';
import { autoAcceptSchema } from '@/lib/api/get-me';

export const settingsInputSchema = z.object({
  auto_accept: z.enum(autoAcceptSchema.options, { error: 'Required field. Please select one' }),
});

export type SettingsInput = z.infer<typeof settingsInputSchema>;
