/**
 * Receipts before they are sent: items and payments checked (BAD_USER_INPUT naming the field), the
 * total computed from the items (VAT included) and the payments required to add up to it, then the
 * vendor's `POST /IT-receipts` body. What the customer owes is the items' total less complimentary
 * items (given for free: VAT still applies, nothing is paid); it is settled by the payments, the
 * receipt-level discount and the uncollected amounts of goods and services (which the vendor takes
 * only with `invoice_issuing`, and `invoice_issuing` only with one of them).
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
  complimentary?: boolean | null;
  sku?: string | null;
}

export interface ReceiptIn {
  items: readonly ReceiptItemIn[];
  cashPaymentAmount?: number | null;
  electronicPaymentAmount?: number | null;
  ticketRestaurantPaymentAmount?: number | null;
  ticketRestaurantQuantity?: number | null;
  goodsUncollectedAmount?: number | null;
  servicesUncollectedAmount?: number | null;
  invoiceIssuing?: boolean | null;
  discount?: number | null;
  linkedReceipt?: string | null;
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
    const complimentary = it.complimentary === true;
    // The vendor: a line discount "cannot be used with 'complimentary'".
    if (complimentary && discount > 0) throw badUserInput(`${at}.complimentary cannot go with a discount`, `${at}.complimentary`);
    const line = cents(quantity * unit - discount);
    if (line < 0) throw badUserInput(`${at}.discount is more than the line's amount`, `${at}.discount`);
    if (!complimentary) total = cents(total + line);
    const item: Obj = { quantity, description: requiredText(it.description, `${at}.description`, 1000), unit_price: unit, vat_rate_code: code };
    if (discount > 0) item.discount = discount;
    if (complimentary) item.complimentary = true;
    const sku = optionalText(it.sku, `${at}.sku`, 100);
    if (sku !== null) item.sku = sku;
    return item;
  });
  const cash = money(input.cashPaymentAmount, `${field}.cashPaymentAmount`);
  const electronic = money(input.electronicPaymentAmount, `${field}.electronicPaymentAmount`);
  const tickets = money(input.ticketRestaurantPaymentAmount, `${field}.ticketRestaurantPaymentAmount`);
  const goods = money(input.goodsUncollectedAmount, `${field}.goodsUncollectedAmount`);
  const services = money(input.servicesUncollectedAmount, `${field}.servicesUncollectedAmount`);
  const discount = money(input.discount, `${field}.discount`);
  const invoiceIssuing = input.invoiceIssuing === true;
  if (discount > total + 0.005) throw badUserInput(`${field}.discount is more than the items' total (${total.toFixed(2)})`, `${field}.discount`);
  if (goods + services > 0 && !invoiceIssuing) {
    throw badUserInput(`${field}.invoiceIssuing must be true with an uncollected amount (it will be invoiced)`, `${field}.invoiceIssuing`);
  }
  if (invoiceIssuing && goods + services === 0) {
    throw badUserInput(`${field}.invoiceIssuing needs goodsUncollectedAmount or servicesUncollectedAmount`, `${field}.invoiceIssuing`);
  }
  const paid = cents(cash + electronic + tickets);
  const settled = cents(paid + goods + services + discount);
  if (Math.abs(settled - total) > 0.005) {
    const what = settled === paid ? `the payments (${paid.toFixed(2)})` : `the payments, discount and uncollected amounts (${settled.toFixed(2)})`;
    throw badUserInput(`${field}: ${what} must add up to the items' total (${total.toFixed(2)})`, `${field}.cashPaymentAmount`, { computedTotal: total });
  }
  const body: Obj = { fiscal_id: fiscalId, items, cash_payment_amount: cash, electronic_payment_amount: electronic };
  if (goods > 0) body.goods_uncollected_amount = goods;
  if (services > 0) body.services_uncollected_amount = services;
  if (invoiceIssuing) body.invoice_issuing = true;
  if (discount > 0) body.discount = discount;
  const linked = optionalText(input.linkedReceipt, `${field}.linkedReceipt`, 50);
  if (linked !== null) body.linked_receipt = linked;
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
