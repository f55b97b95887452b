using System;
using System.Collections.Generic;
using System.Linq;
using Inventory.Models;

namespace Inventory.Pricing
{
    /// <summary>A discount on an order total: a share off once the total reaches a threshold.</summary>
    public readonly struct VolumeDiscount
    {
        public VolumeDiscount(decimal threshold, decimal rate)
        {
            Threshold = threshold;
            Rate = rate;
        }

        public decimal Threshold { get; }

        public decimal Rate { get; }
    }

    /// <summary>
    /// Prices order lines: unit prices, volume discounts and sales tax.
    /// </summary>
    public static class PriceCalculator
    {
        /// <summary>
        /// Computes an order's total after the best volume discount and the tax rate.
        /// </summary>
        /// <param name="lines">Unit price and quantity of each line.</param>
        /// <param name="discounts">Available discounts; the largest that applies wins.</param>
        /// <param name="taxRate">Sales tax as a fraction, 0.2 for 20%.</param>
        public static Money OrderTotal(
            IEnumerable<(Money UnitPrice, int Quantity)> lines,
            IReadOnlyCollection<VolumeDiscount> discounts,
            decimal taxRate)
        {
            var list = lines.ToList();
            if (list.Count == 0)
            {
                throw new ArgumentException("an order needs at least one line", nameof(lines));
            }
            var currency = list[0].UnitPrice.Currency;
            var subtotal = list.Aggregate(
                Money.Zero(currency), (sum, line) => sum.Plus(LineTotal(line.UnitPrice, line.Quantity)));

            decimal BestRate() => discounts
                .Where(d => subtotal.Amount >= d.Threshold)
                .Select(d => d.Rate)
                .DefaultIfEmpty(0m)
                .Max();

            var discounted = subtotal.Amount * (1 - BestRate());
            return new Money(Math.Round(discounted * (1 + taxRate), 2, MidpointRounding.ToEven), currency);
        }

        /// <summary>
        /// The price of one order line: the unit price times the quantity, rounded to cents.
        /// </summary>
        public static Money LineTotal(Money unitPrice, int quantity)
        {
            if (quantity < 0)
            {
                throw new ArgumentOutOfRangeException(nameof(quantity));
            }
            return new Money(Math.Round(unitPrice.Amount * quantity, 2), unitPrice.Currency);
        }
    }
}
