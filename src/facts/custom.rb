# Runs the custom facts that Puppet modules ship (lib/facter/*.rb) the way Facter 4 runs
# them, and prints their values as JSON. Ordo's own stand-in for Facter's Ruby API, not
# Facter: `Facter.add` with `setcode` (a block or a shell command), `confine` (fact => values,
# arrays, regexps, ranges, lambdas, blocks), `has_weight`, named resolutions, aggregate facts
# (`chunk`, `aggregate`), `Facter.value`/`Facter.fact`/`Facter[]`, and
# `Facter::Core::Execution` / `Facter::Util::Resolution` (`exec`, `execute`, `which`).
#
# Usage: ruby --disable-gems -e TEXT (src/ruby/require.rb, then this file), with one JSON document on stdin:
#   {"dirs": [lib/facter folders], "lib": [module lib folders], "core": {core and legacy
#    facts}, "external": {facts.d facts}, "env": {FACTER_* facts}}
# Output on stdout: {"values": {name: value or null}, "warnings": [...]}, one entry per fact
# that has a custom resolution, resolved in the order the facts were added. Ordo runs it
# (src/facts/custom.rs) only when a module ships lib/facter/*.rb.

require 'json'
require 'timeout'
require 'open3'

# What fact code prints, and the commands it starts, go to standard error: only the answer
# is written on the standard output Ordo reads.
ORDO_OUT = STDOUT.dup
STDOUT.reopen(STDERR)

module Facter
  # Raised by a resolution whose code failed: the fact stops looking at other resolutions.
  class ResolveCustomFactError < StandardError; end

  WARNINGS = []
  EXTERNAL_WEIGHT = 10_000
  ENV_WEIGHT = 1_000_000

  class << self
    attr_accessor :core_facts, :external_facts, :env_facts

    def collection
      @collection ||= {}
    end

    def warn_message(text)
      WARNINGS << text.to_s unless WARNINGS.include?(text.to_s)
    end

    def add(name, options = {}, &block)
      fact = fact_object(name, options)
      fact.add(options.dup, &block)
      fact
    end

    def define_fact(name, options = {}, &block)
      fact = fact_object(name, options)
      fact.instance_eval(&block) if block
      fact
    rescue StandardError => e
      warn_message("Unable to add fact #{name}: #{e}")
      nil
    end

    def fact_object(name, options = {})
      key = name.to_s.downcase
      collection[key] ||= Util::Fact.new(key, options)
    end

    # What Facter's core gives for a name (dotted: into structured facts), without custom
    # facts: what a custom fact of weight 0 gives way to.
    def core_value(query)
      dig(core_facts, query.to_s)
    end

    def value(query)
      query = query.to_s.downcase
      fact = collection[query]
      return fact.value if fact

      top, rest = query.split('.', 2)
      if rest && (fact = collection[top])
        return dig_path(fact.value, rest.split('.'))
      end

      base = core_facts.merge(external_facts).merge(env_facts)
      dig(base, query)
    end

    def fact(query)
      query = query.to_s.downcase
      return collection[query] if collection[query]

      v = value(query)
      v.nil? ? nil : ResolvedFact.new(query, v)
    end

    def [](query)
      fact(query)
    end

    def dig(facts, query)
      return facts[query] if facts.key?(query)

      parts = query.split('.')
      return nil unless facts.key?(parts.first)

      dig_path(facts[parts.first], parts.drop(1))
    end

    def dig_path(value, parts)
      parts.each do |p|
        value = case value
                when Hash then value.key?(p) ? value[p] : nil
                when Array then p =~ /\A\d+\z/ ? value[p.to_i] : nil
                end
        return nil if value.nil?
      end
      value
    end

    def to_hash
      h = core_facts.merge(external_facts).merge(env_facts)
      collection.each do |name, f|
        v = f.value
        v.nil? ? h.delete(name) : h[name] = v
      end
      h
    end

    def list
      to_hash.keys
    end

    def version
      '4.3.0'
    end

    def debug(_msg) = nil
    def debugonce(_msg) = nil
    def debugging? = false
    def trace? = false
    def trace(_v) = nil
    def debugging(_v) = nil
    def search(*_dirs) = nil
    def search_path = []
    def search_external(_dirs) = nil
    def search_external_path = []
    def loadfacts = nil
    def reset = nil
    def clear = nil
    def flush = collection.each_value(&:flush)
    def on_message = nil

    def warn(msg)
      warn_message(msg)
    end

    alias warnonce warn

    def log_exception(exception, message = nil)
      text = message || exception.message
      text = exception.message if text == :default
      warn_message(text)
    end
  end

  # A fact found by name outside the custom facts (core, legacy, external).
  class ResolvedFact
    attr_reader :name, :value

    def initialize(name, value)
      @name = name
      @value = value
    end
  end

  module Util
    class Fact
      attr_reader :name, :options, :used_resolution_weight

      def initialize(name, options = {})
        @name = name
        @options = options.dup
        @resolves = []
        @searching = false
        @value = nil
        @used_resolution_weight = 0
        @builtins_added = false
      end

      def custom?
        @resolves.any? { |r| r.fact_type != :external }
      end

      def add(options = {}, &block)
        define_resolution(nil, options, &block)
      end

      def define_resolution(resolution_name, options = {}, &block)
        type = options.delete(:type) || :simple
        resolve = create_or_return_resolution(resolution_name, type)
        resolve.options(options) unless options.empty?
        resolve.evaluate(&block) if block
        resolve
      rescue StandardError => e
        Facter.warn_message("Unable to add resolve #{resolution_name.inspect} for fact #{@name}: #{e.message}")
        nil
      end

      def resolution(name)
        return nil if name.nil?

        @resolves.find { |r| r.name == name }
      end

      def flush
        @resolves.each(&:flush)
        @value = nil
      end

      def value
        return @value unless @value.nil?
        return nil if @resolves.empty?

        add_external_resolutions
        raise "Caught recursion on #{@name}" if @searching

        @searching = true
        begin
          suitable = sorted(@resolves.select(&:suitable?))
          @value = first_real_value(suitable)
          @value = if @value.nil?
                     Facter.core_value(@name)
                   elsif @used_resolution_weight <= 0
                     core = Facter.core_value(@name)
                     core.nil? ? @value : core
                   else
                     @value
                   end
        ensure
          @searching = false
        end
        @value
      end

      private

      # External facts (facts.d) and FACTER_ variables of the same name are resolutions of
      # the fact, of weights 10,000 and 1,000,000, as in Facter.
      def add_external_resolutions
        return if @builtins_added

        @builtins_added = true
        { Facter.external_facts => EXTERNAL_WEIGHT, Facter.env_facts => ENV_WEIGHT }.each do |facts, weight|
          next unless facts.key?(@name)

          r = Resolution.new(nil, self)
          r.options(value: facts[@name], fact_type: :external, weight: weight)
          @resolves << r
        end
      end

      def sorted(resolutions)
        i = 0
        resolutions.sort_by { |r| [-r.weight, r.fact_type == :external ? 0 : 1, i += 1] }
      end

      def first_real_value(resolutions)
        resolutions.each do |r|
          begin
            v = r.value
          rescue Facter::ResolveCustomFactError
            break
          end
          @used_resolution_weight = r.weight
          return v unless v.nil?
        end
        nil
      end

      def create_or_return_resolution(name, type)
        resolve = resolution(name)
        if resolve
          if type != resolve.resolution_type
            raise ArgumentError, "Cannot return resolution #{name} with type #{type}; already defined as #{resolve.resolution_type}"
          end
        else
          resolve = case type
                    when :simple then Resolution.new(name, self)
                    when :aggregate then Facter::Core::Aggregate.new(name, self)
                    else
                      raise ArgumentError, "Expected resolution type to be one of (:simple, :aggregate) but was #{type}"
                    end
          @resolves << resolve
        end
        resolve
      end
    end

    # Comparisons of a confine: strings compared without case, symbols as strings.
    module Values
      module_function

      def convert(value)
        value = value.to_s if value.is_a?(Symbol)
        value = value.downcase if value.is_a?(String)
        value
      end

      def deep_freeze(value)
        case value
        when Numeric, Symbol, TrueClass, FalseClass, NilClass then value
        when String then value.dup.freeze
        when Array then value.map { |v| deep_freeze(v) }.freeze
        when Hash then value.each_with_object({}) { |(k, v), h| h[deep_freeze(k)] = deep_freeze(v) }.freeze
        else raise ArgumentError, "Cannot deep freeze #{value}:#{value.class}"
        end
      end

      def deep_merge(left, right, path = [])
        if left.is_a?(Hash) && right.is_a?(Hash)
          left.merge(right) do |key, l, r|
            path.push(key)
            merged = deep_merge(l, r, path)
            path.pop
            merged
          end
        elsif left.is_a?(Array) && right.is_a?(Array)
          left.dup.concat(right)
        elsif right.nil?
          left
        elsif left.nil?
          right
        else
          msg = +"Cannot merge #{left.inspect}:#{left.class} and #{right.inspect}:#{right.class}"
          msg << ' at root' << path.map { |p| "[#{p.inspect}]" }.join unless path.empty?
          raise ArgumentError, msg
        end
      end
    end

    class Confine
      def initialize(fact = nil, *values, &block)
        raise ArgumentError, 'The fact name must be provided' unless fact || block
        raise ArgumentError, 'One or more values or a block must be provided' if values.empty? && !block

        @fact = fact
        @values = values
        @block = block
      end

      def true?
        if @block && !@fact
          begin
            return !!@block.call
          rescue StandardError
            return false
          end
        end
        fact = Facter[@fact]
        return false unless fact

        value = Values.convert(fact.value)
        return false if value.nil?

        if @block
          begin
            return !!@block.call(value)
          rescue StandardError
            return false
          end
        end
        @values.any? { |v| Values.convert(v) === value }
      end
    end

    class NormalizationError < StandardError; end

    # What simple and aggregate resolutions share: confines, weight, time limit, value.
    module Resolvable
      attr_accessor :timeout
      attr_reader :fact

      def has_weight(weight)
        @weight = weight
        self
      end

      def confine(confines = nil, &block)
        case confines
        when Hash
          confines.each { |fact, values| @confines.push Confine.new(fact, *values) }
        else
          if block
            @confines.push(confines ? Confine.new(confines, &block) : Confine.new(&block))
          end
        end
      end

      def weight
        @weight || @confines.length
      end

      def suitable?
        @confines.all?(&:true?)
      end

      def limit
        @timeout || 0
      end

      def on_flush(&block)
        @on_flush_block = block
      end

      def flush
        @on_flush_block&.call
      end

      def value
        result = nil
        Timeout.timeout(limit) { result = resolve_value }
        normalize(result)
      rescue Timeout::Error
        Facter.warn_message("Timed out after #{limit} seconds while resolving #{qualified_name}")
        nil
      rescue NormalizationError => e
        Facter.warn_message("Fact resolution #{qualified_name} resolved to an invalid value: #{e.message}")
        nil
      rescue StandardError => e
        Facter.warn_message("Error while resolving custom fact #{qualified_name}: #{e.message}")
        raise Facter::ResolveCustomFactError
      end

      private

      def qualified_name
        "fact='#{@fact.name}', resolution='#{@name || '<anonymous>'}'"
      end

      def normalize(value)
        case value
        when Integer, Float, TrueClass, FalseClass, NilClass then value
        when Symbol then value.to_s
        when String
          v = value.encode(Encoding::UTF_8)
          raise NormalizationError, "String #{value.inspect} doesn't match the reported encoding #{value.encoding}" unless v.valid_encoding?

          v
        when Array then value.map { |v| normalize(v) }
        when Hash then value.to_h { |k, v| [normalize(k).to_s, normalize(v)] }
        else
          if value.is_a?(::Time) || defined?(::Date) && value.is_a?(::Date)
            require 'time' # Time#iso8601
            return value.iso8601
          end
          raise NormalizationError, "Expected #{value} to be one of [Integer, Float, TrueClass, FalseClass, NilClass, Symbol, String, Array, Hash, Date, Time], but was #{value.class}"
        end
      rescue EncodingError
        raise NormalizationError, "String encoding #{value.encoding} is not UTF-8 and could not be converted to UTF-8"
      end
    end

    class Resolution
      include Resolvable

      attr_accessor :name, :code, :fact_type
      attr_writer :value

      def initialize(name, fact)
        @name = name
        @fact = fact
        @confines = []
        @value = nil
        @weight = nil
        @fact_type = :custom
      end

      def resolution_type
        :simple
      end

      def evaluate(&block)
        instance_eval(&block)
      end

      def options(options)
        %i[name value timeout weight fact_type file is_env].each do |o|
          instance_variable_set("@#{o}", options.delete(o)) if options.key?(o)
        end
        raise ArgumentError, "Invalid resolution options #{options.keys.inspect}" unless options.empty?
      end

      def setcode(string = nil, &block)
        if string
          @code = proc do
            out = Facter::Core::Execution.execute(string, on_fail: nil)
            out.nil? || out.empty? ? nil : out
          end
        elsif block
          @code = block
        else
          raise ArgumentError, 'You must pass either code or a block'
        end
        self
      end

      def self.exec(command)
        Facter::Core::Execution.exec(command)
      end

      def self.which(bin)
        Facter::Core::Execution.which(bin)
      end

      def self.with_env(values, &block)
        Facter::Core::Execution.with_env(values, &block)
      end

      private

      def resolve_value
        return @value unless @value.nil?
        return nil if @code.nil?

        @code.call
      end
    end
  end

  module Core
    class Aggregate
      include Facter::Util::Resolvable

      attr_reader :name

      def initialize(name, fact)
        @name = name
        @fact = fact
        @confines = []
        @chunks = {}
        @deps = {}
        @aggregate = nil
      end

      def fact_type
        :custom
      end

      def resolution_type
        :aggregate
      end

      def options(options)
        %i[name timeout weight fact_type].each do |o|
          instance_variable_set("@#{o}", options.delete(o)) if options.key?(o)
        end
        raise ArgumentError, "Invalid aggregate options #{options.keys.inspect}" unless options.empty?
      end

      def evaluate(&block)
        instance_eval(&block)
      end

      def chunk(name, opts = {}, &block)
        raise ArgumentError, 'Facter::Core::Aggregate#chunk requires a block' unless block
        raise ArgumentError, 'Facter::Core::Aggregate#expected chunk name to be a Symbol' unless name.is_a?(Symbol)

        opts = opts.dup
        deps = Array(opts.delete(:require))
        raise ArgumentError, "Unexpected options passed to Facter::Core::Aggregate#chunk: #{opts.keys.inspect}" unless opts.empty?

        @deps[name] = deps
        @chunks[name] = block
        self
      end

      def aggregate(&block)
        raise ArgumentError, 'Facter::Core::Aggregate#aggregate requires a block' unless block

        @aggregate = block
        self
      end

      private

      def resolve_value
        results = {}
        ordered_chunks.each do |name|
          input = @deps[name].map { |d| results[d] }
          results[name] = Facter::Util::Values.deep_freeze(@chunks[name].call(*input))
        end
        return @aggregate.call(results) if @aggregate

        begin
          results.values.inject { |a, b| Facter::Util::Values.deep_merge(a, b) }
        rescue ArgumentError => e
          raise ArgumentError, "Could not deep merge all chunks (Original error: #{e.message}), ensure that chunks return either an Array or Hash or override the aggregate block"
        end
      end

      # The chunks in an order where each comes after those it requires.
      def ordered_chunks
        done = []
        visiting = []
        visit = lambda do |n|
          return if done.include?(n)
          raise ArgumentError, "Could not order chunks; found the following dependency cycles: #{(visiting + [n]).inspect}" if visiting.include?(n)
          raise ArgumentError, "Chunk #{n.inspect} requires an unknown chunk" unless @deps.key?(n)

          visiting.push(n)
          @deps[n].each { |d| visit.call(d) }
          visiting.pop
          done << n
        end
        @deps.each_key { |n| visit.call(n) }
        done
      end
    end

    module Execution
      class ExecutionFailure < StandardError; end

      SEARCH_PATHS = ['/sbin', '/usr/sbin'].freeze

      module_function

      def search_paths
        ENV.fetch('PATH', '').split(File::PATH_SEPARATOR) + SEARCH_PATHS
      end

      def absolute_path?(path, _platform = nil)
        path.to_s.start_with?('/')
      end

      def which(bin)
        if absolute_path?(bin)
          return bin if File.executable?(bin) && File.file?(bin)
        else
          search_paths.each do |dir|
            dest = File.join(dir, bin)
            return dest if File.executable?(dest) && File.file?(dest)
          end
        end
        nil
      end

      def expand_command(command)
        match = command.match(/\A"(.+?)"(?:\s+(.*))?/) || command.match(/\A'(.+?)'(?:\s+(.*))?/)
        exe, args = match ? match.captures : command.split(/ /, 2)
        return nil unless exe && (expanded = which(exe))

        expanded = "'#{expanded}'" if expanded =~ /\s/
        expanded += " #{args}" if args
        expanded
      end

      def with_env(values)
        old = {}
        values.each do |k, v|
          old[k] = ENV[k] if ENV.key?(k)
          ENV[k] = v
        end
        yield
      ensure
        values.each_key { |k| old.key?(k) ? ENV[k] = old[k] : ENV.delete(k) }
      end

      def exec(command)
        execute(command, on_fail: nil)
      end

      def execute(command, options = {})
        on_fail = options.fetch(:on_fail, :raise)
        expand = options.fetch(:expand, true)
        timeout = (options[:timeout] || options[:time_limit] || options[:limit]).to_i
        expanded = expand ? expand_command(command.to_s) : command.to_s
        if expanded.nil?
          raise ExecutionFailure, "Could not execute '#{command}': command not found" if on_fail == :raise

          return on_fail
        end
        out, = execute_command(expanded, on_fail, nil, timeout.positive? ? timeout : nil)
        out
      end

      def execute_command(command, on_fail = nil, _logger = nil, timeout = nil)
        out = +''
        begin
          Open3.popen3({ 'LC_ALL' => 'C', 'LANG' => 'C' }, command.to_s) do |stdin, stdout, stderr, thread|
            stdin.close
            err_reader = Thread.new { stderr.read }
            begin
              Timeout.timeout(timeout || 300) { out << stdout.read }
            rescue Timeout::Error
              Process.kill('KILL', thread.pid)
              raise StandardError, "Timeout encounter after #{timeout}s, killing process with pid: #{thread.pid}" if on_fail == :raise
            ensure
              err_reader.kill
            end
          end
        rescue StandardError => e
          return on_fail unless on_fail == :raise

          raise ExecutionFailure, "Failed while executing '#{command}': #{e.message}"
        end
        [out.strip, '']
      end
    end
  end

  module Util
    # Facter 4's file helpers, used by some modules' facts.
    module FileHelper
      module_function

      def safe_read(path, default = '')
        File.readable?(path) ? File.read(path, encoding: Encoding::UTF_8) : default
      end

      def safe_readlines(path, default = [], sep = $/, chomp: false)
        File.readable?(path) ? File.readlines(path, sep, chomp: chomp, encoding: Encoding::UTF_8) : default
      end
    end
  end
end

LegacyFacter = Facter unless defined?(LegacyFacter)

input = JSON.parse($stdin.read)
input.fetch('lib', []).reverse_each { |d| $LOAD_PATH.unshift(d) unless $LOAD_PATH.include?(d) }
Facter.core_facts = input.fetch('core', {})
Facter.external_facts = input.fetch('external', {})
Facter.env_facts = input.fetch('env', {})

input.fetch('dirs', []).each do |dir|
  Dir.glob(File.join(dir, '*.rb')).sort.each do |file|
    next unless File.file?(file)

    begin
      Kernel.load(file)
    rescue ScriptError => e
      Facter.warn_message("Error loading fact #{file}: #{e.message}")
    rescue StandardError => e
      Facter.warn_message("error while resolving custom facts in #{file} #{e.message}")
    rescue SystemExit, Interrupt, Exception => e # rubocop:disable Lint/RescueException
      Facter.warn_message("Error loading fact #{file}: #{e.class}: #{e.message}")
    end
  end
end

values = {}
Facter.collection.each do |name, fact|
  next unless fact.custom?

  begin
    v = fact.value
    JSON.generate(v) # a value JSON cannot carry (NaN) is a warning
    values[name] = v
  rescue Exception => e # rubocop:disable Lint/RescueException
    Facter.warn_message("Error while resolving custom fact #{name}: #{e.message}")
    values[name] = nil
  end
end

ORDO_OUT.write(JSON.generate({ 'values' => values, 'warnings' => Facter::WARNINGS }))
ORDO_OUT.write("\n")
ORDO_OUT.flush
