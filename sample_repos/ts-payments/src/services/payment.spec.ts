import { StripeClient } from "../clients/stripe";
import { PaymentError } from "../errors";
import { BillingInterval, SubscriptionStatus } from "../models/subscription";
import { PaymentRepository } from "../repositories/paymentRepository";
import { PaymentService } from "./payment";

function fakeStripe(overrides: Partial<Record<keyof StripeClient, jest.Mock>> = {}): StripeClient {
  return {
    createCustomer: jest.fn().mockResolvedValue("cus_123"),
    attachPaymentMethod: jest.fn().mockResolvedValue(undefined),
    createSubscription: jest.fn().mockResolvedValue({
      id: "sub_123",
      status: "active",
      current_period_start: 1_700_000_000,
      current_period_end: 1_702_592_000,
      cancel_at_period_end: false,
      latest_invoice: null,
    }),
    cancelSubscription: jest.fn(),
    createPaymentIntent: jest.fn(),
    ...overrides,
  } as unknown as StripeClient;
}

async function seed(repo: PaymentRepository) {
  await repo.customers.save({ id: "c1", email: "ada@example.com", name: "Ada", taxExempt: false, createdAt: new Date() });
  await repo.plans.save({
    id: "pro",
    name: "Pro",
    stripePriceId: "price_pro",
    interval: BillingInterval.Month,
    unitAmount: 2900,
    currency: "usd",
  });
}

describe("PaymentService.createSubscription", () => {
  let repo: PaymentRepository;

  beforeEach(async () => {
    repo = new PaymentRepository();
    await seed(repo);
  });

  it("creates the provider customer and stores an active subscription", async () => {
    const stripe = fakeStripe();
    const service = new PaymentService(stripe, repo);

    const result = await service.createSubscription({ customerId: "c1", planId: "pro", paymentMethodId: "pm_1" });

    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.value.subscription.status).toBe(SubscriptionStatus.Active);
    expect(stripe.createCustomer).toHaveBeenCalledWith("ada@example.com", "Ada", { customerId: "c1" });
    expect(stripe.attachPaymentMethod).toHaveBeenCalledWith("cus_123", "pm_1");
    expect((await repo.findCustomer("c1"))?.stripeCustomerId).toBe("cus_123");
  });

  it("refuses a second live subscription", async () => {
    const service = new PaymentService(fakeStripe(), repo);
    await service.createSubscription({ customerId: "c1", planId: "pro" });

    const second = await service.createSubscription({ customerId: "c1", planId: "pro" });

    expect(second.ok).toBe(false);
    if (second.ok) return;
    expect(second.error.code).toBe("already_subscribed");
  });

  it("returns card declines as a failed result", async () => {
    const stripe = fakeStripe({
      createSubscription: jest.fn().mockRejectedValue(new PaymentError("card_declined", "Your card was declined.")),
    });
    const service = new PaymentService(stripe, repo);

    const result = await service.createSubscription({ customerId: "c1", planId: "pro" });

    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error.code).toBe("card_declined");
  });

  it("reports unknown plans without calling the provider", async () => {
    const stripe = fakeStripe();
    const service = new PaymentService(stripe, repo);

    const result = await service.createSubscription({ customerId: "c1", planId: "enterprise" });

    expect(result.ok).toBe(false);
    expect(stripe.createSubscription).not.toHaveBeenCalled();
  });
});
