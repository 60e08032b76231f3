/**
 * Receipts before they are sent: items and payments checked (BAD_USER_INPUT naming the field), the
 * total computed from the items (VAT included) and the payments required to add up to it, then the
 * vendor's `POST /IT-receipts` body.
 */
import { cents } from '../../contract/fatturapa.ts';
import { badUserInput } from '../runtime/errors.ts';
import { optionalText, requiredText } from '../runtime/validate.ts';
import type { Obj } from '../../contract/values.ts';

/** VAT codes a receipt item may carry. */
export const RECEIPT_VAT_CODES = ['22', '10', '5', '4', 'N1', 'N2', 'N3', 'N4', 'N5', 'N6'] as const;
export const MAX_RECEIPT_ITEMS = 500;

export interface ReceiptItemIn {
  description: string;
  quantity?: number | null;
  unitPrice: number;
  vatRateCode: string;
  discount?: number | null;
  sku?: string | null;
}

export interface ReceiptIn {
  items: readonly ReceiptItemIn[];
  cashPaymentAmount?: number | null;
  electronicPaymentAmount?: number | null;
  ticketRestaurantPaymentAmount?: number | null;
  ticketRestaurantQuantity?: number | null;
  lotteryCode?: string | null;
  tags?: readonly string[] | null;
}

function money(v: number | null | undefined, field: string): number {
  const n = v ?? 0;
  if (!Number.isFinite(n) || n < 0) throw badUserInput(`${field} must be 0 or more`, field);
  if (n >= 1e9) throw badUserInput(`${field} is too large`, field);
  return n;
}

/** The upstream body of a receipt for `fiscalId`, with its computed total. */
export function receiptBody(fiscalId: string, input: ReceiptIn, field = 'input'): { body: Obj; total: number } {
  if (input.items.length === 0) throw badUserInput(`${field}.items must hold at least one item`, `${field}.items`);
  if (input.items.length > MAX_RECEIPT_ITEMS) throw badUserInput(`${field}.items holds more than ${MAX_RECEIPT_ITEMS} items`, `${field}.items`);
  let total = 0;
  const items = input.items.map((it, i) => {
    const at = `${field}.items[${i}]`;
    const quantity = it.quantity ?? 1;
    if (!Number.isFinite(quantity) || quantity <= 0) throw badUserInput(`${at}.quantity must be more than 0`, `${at}.quantity`);
    const unit = money(it.unitPrice, `${at}.unitPrice`);
    const code = it.vatRateCode.trim().toUpperCase();
    if (!(RECEIPT_VAT_CODES as readonly string[]).includes(code)) throw badUserInput(`${at}.vatRateCode must be one of ${RECEIPT_VAT_CODES.join(', ')}`, `${at}.vatRateCode`);
    const discount = money(it.discount, `${at}.discount`);
    const line = cents(quantity * unit - discount);
    if (line < 0) throw badUserInput(`${at}.discount is more than the line's amount`, `${at}.discount`);
    total = cents(total + line);
    const item: Obj = { quantity, description: requiredText(it.description, `${at}.description`, 1000), unit_price: unit, vat_rate_code: code };
    if (discount > 0) item.discount = discount;
    const sku = optionalText(it.sku, `${at}.sku`, 100);
    if (sku !== null) item.sku = sku;
    return item;
  });
  const cash = money(input.cashPaymentAmount, `${field}.cashPaymentAmount`);
  const electronic = money(input.electronicPaymentAmount, `${field}.electronicPaymentAmount`);
  const tickets = money(input.ticketRestaurantPaymentAmount, `${field}.ticketRestaurantPaymentAmount`);
  const paid = cents(cash + electronic + tickets);
  if (Math.abs(paid - total) > 0.005) {
    throw badUserInput(`${field}: the payments (${paid.toFixed(2)}) must add up to the items' total (${total.toFixed(2)})`, `${field}.cashPaymentAmount`, { computedTotal: total });
  }
  const body: Obj = { fiscal_id: fiscalId, items, cash_payment_amount: cash, electronic_payment_amount: electronic };
  if (tickets > 0) {
    const q = input.ticketRestaurantQuantity ?? 0;
    if (!Number.isInteger(q) || q < 1)
      throw badUserInput(`${field}.ticketRestaurantQuantity must say how many vouchers paid ${tickets.toFixed(2)}`, `${field}.ticketRestaurantQuantity`);
    body.ticket_restaurant_payment_amount = tickets;
    body.ticket_restaurant_quantity = q;
  }
  if (input.lotteryCode !== null && input.lotteryCode !== undefined && input.lotteryCode.trim() !== '') {
    const code = input.lotteryCode.trim().toUpperCase();
    if (!/^[A-Z0-9]{8}$/.test(code)) throw badUserInput(`${field}.lotteryCode must be 8 letters and digits`, `${field}.lotteryCode`);
    body.lottery_code = code;
  }
  if (input.tags && input.tags.length > 0) {
    if (input.tags.length > 10) throw badUserInput(`${field}.tags holds more than 10 tags`, `${field}.tags`);
    body.tags = input.tags.map((t, i) => requiredText(t, `${field}.tags[${i}]`, 50));
  }
  return { body, total };
}
