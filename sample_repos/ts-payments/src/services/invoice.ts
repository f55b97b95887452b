import { randomUUID } from "crypto";

import { StripeClient } from "../clients/stripe";
import { Injectable } from "../decorators";
import { PaymentError } from "../errors";
import { Invoice, InvoiceLine, InvoiceStatus } from "../models/invoice";
import { PaymentRepository } from "../repositories/paymentRepository";
import { err, ok, Result } from "../types/result";
import { addMoney, Currency, Money, multiplyMoney, sumMoney, zero } from "../utils/money";

const PAYMENT_TERMS_DAYS = 14;

export interface InvoiceTotals {
  subtotal: Money;
  tax: Money;
  total: Money;
}

/**
 * Adds up invoice lines: net subtotal, tax per line at that line's rate, and
 * the gross total.
 */
export function computeTotals(lines: InvoiceLine[], currency: Currency): InvoiceTotals {
  let subtotal = zero(currency);
  let tax = zero(currency);
  for (const line of lines) {
    const net = multiplyMoney(line.unitAmount, line.quantity);
    subtotal = addMoney(subtotal, net);
    if (line.taxRate) tax = addMoney(tax, multiplyMoney(net, line.taxRate / 100));
  }
  return { subtotal, tax, total: addMoney(subtotal, tax) };
}

export const nextInvoiceNumber = (year: number, sequence: number): string =>
  `INV-${year}-${String(sequence).padStart(6, "0")}`;

@Injectable()
export class InvoiceService {
  private sequence = 0;

  constructor(
    private readonly repo: PaymentRepository,
    private readonly stripe: StripeClient,
  ) {}

  /**
   * Creates a draft invoice for a customer from a list of lines; nothing is
   * sent until the invoice is finalized.
   */
  async createDraft(customerId: string, lines: InvoiceLine[], subscriptionId?: string): Promise<Invoice> {
    if (lines.length === 0) throw new RangeError("An invoice needs at least one line");
    const currency = lines[0].unitAmount.currency;
    const totals = computeTotals(lines, currency);
    const dueDate = new Date(Date.now() + PAYMENT_TERMS_DAYS * 24 * 3600 * 1000);
    return this.repo.invoices.save({
      id: randomUUID(),
      number: nextInvoiceNumber(new Date().getUTCFullYear(), ++this.sequence),
      customerId,
      subscriptionId,
      status: InvoiceStatus.Draft,
      lines,
      ...totals,
      dueDate,
    });
  }

  async finalize(invoiceId: string): Promise<Result<Invoice, PaymentError>> {
    const invoice = await this.repo.invoices.getById(invoiceId);
    if (invoice.status !== InvoiceStatus.Draft) {
      return err(new PaymentError("invoice_not_open", `Invoice ${invoice.number} is ${invoice.status}`));
    }
    if (invoice.stripeInvoiceId) await this.stripe.finalizeInvoice(invoice.stripeInvoiceId);
    return ok(await this.repo.invoices.update(invoice.id, { status: InvoiceStatus.Open }));
  }

  async markPaid(invoiceId: string, paidAt = new Date()): Promise<Invoice> {
    return this.repo.invoices.update(invoiceId, { status: InvoiceStatus.Paid, paidAt });
  }

  /**
   * Lists a customer's open invoices whose due date has passed and the total
   * amount still owed.
   */
  async overdueFor(customerId: string, now = new Date()): Promise<{ invoices: Invoice[]; owed: Money | null }> {
    const open = await this.repo.openInvoices(customerId);
    const overdue = open.filter((inv) => inv.dueDate.getTime() < now.getTime());
    if (overdue.length === 0) return { invoices: [], owed: null };
    return { invoices: overdue, owed: sumMoney(overdue.map((i) => i.total), overdue[0].total.currency) };
  }

  async voidInvoice(invoiceId: string): Promise<Result<Invoice, PaymentError>> {
    const invoice = await this.repo.invoices.getById(invoiceId);
    if (invoice.status === InvoiceStatus.Paid) {
      return err(new PaymentError("invoice_not_open", "Paid invoices cannot be voided; refund instead"));
    }
    return ok(await this.repo.invoices.update(invoiceId, { status: InvoiceStatus.Void }));
  }
}
